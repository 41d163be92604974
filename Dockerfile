# ontime's image, in the style of CoreDNS's own: a static binary on an
# empty base, run as an unprivileged user. `make image` builds it where a
# container engine exists; nothing else in the project needs one.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=0.1.0
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.Version=${VERSION}" -o /coredns ./cmd/coredns

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /coredns /coredns
USER 65532:65532
EXPOSE 53 53/udp 9153
ENTRYPOINT ["/coredns"]
