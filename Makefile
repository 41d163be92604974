# ontime: a custom CoreDNS build for authoritative DNS.
#   make run    build and serve Corefile.example on 127.0.0.1:1053
#   make test   install what the tests need (Knot DNS, dig) and run every test

GO      ?= go
VERSION ?= 0.1.0
LDFLAGS := -X main.Version=$(VERSION)
SUDO    := $(shell [ "$$(id -u)" = 0 ] || echo sudo)
APT     := DEBIAN_FRONTEND=noninteractive $(SUDO) apt-get
FUZZTIME ?= 30s

.PHONY: all build run test test-deps bench bench-deps overload blocking alias swap zones profile fuzz generate image clean

all: build

build:
	$(GO) build -ldflags "$(LDFLAGS)" -o coredns ./cmd/coredns

run: build
	./coredns -conf Corefile.example

generate:
	$(GO) generate ./...

# Knot DNS is the reference the conformance suite compares with; dig is what
# the README's examples use; BIND's dnssec-signzone (bind9-utils) signs the
# random zones of test/random_test.go.
test-deps:
	@command -v knotd >/dev/null && command -v dig >/dev/null && command -v dnssec-signzone >/dev/null || \
		{ $(APT) update -qq && $(APT) install -y -qq --no-install-recommends knot dnsutils bind9-utils >/dev/null; }

test: test-deps
	$(GO) vet ./...
	ONTIME_REQUIRE_KNOT=1 $(GO) test -count=1 -timeout 20m ./...
	$(GO) test -count=1 -race -timeout 20m ./zonestore/... ./codel/ ./plugin/codel/ ./plugin/fastpack/ ./alias/... ./plugin/alias/ ./plugin/zonestore/ ./internal/gcpace/ ./internal/hugeheap/ ./internal/yield/ ./rrl/ ./plugin/rrl/ ./plugin/shardmetrics/ ./replay/ ./connlimit/ ./wire/ ./internal/swar/

# dig: bench/lib.sh's answering asks each server for its SOA before it is loaded;
# dnssec-signzone (bind9-utils) signs the bench zone for SIGNED=nsec or nsec3.
bench-deps:
	@command -v knotd >/dev/null && command -v dnsperf >/dev/null && command -v bc >/dev/null && \
		command -v gnuplot >/dev/null && command -v curl >/dev/null && command -v nsd >/dev/null && \
		command -v dig >/dev/null && command -v dnssec-signzone >/dev/null || \
		{ $(APT) update -qq && $(APT) install -y -qq --no-install-recommends knot nsd dnsperf bc gnuplot-nox curl dnsutils bind9-utils >/dev/null; }

# Go benchmarks of the libraries and of the whole chain in process, then the
# peer table: ontime, stock file, Knot DNS and NSD over loopback (bench/README.md).
# The overload, blocking-plugin, ALIAS head-of-line and profile runs are
# bench/overload.sh, bench/blocking.sh, bench/alias.sh and bench/profile.sh
# (make overload, blocking, alias, profile).
bench: bench-deps build
	$(GO) test -run XXX -bench . -benchmem ./zonestore/ ./codel/ ./plugin/fastpack/ ./plugin/zonestore/
	$(GO) test -run XXX -bench Chain -benchmem -cpu 1,2 ./plugin/codel/
	bash bench/load.sh

overload blocking alias swap zones profile: bench-deps
	bash bench/$@.sh

fuzz:
	$(GO) test -run XXX -fuzz FuzzParse -fuzztime $(FUZZTIME) -fuzzminimizetime 1x ./zonestore/
	$(GO) test -run XXX -fuzz FuzzLookup -fuzztime $(FUZZTIME) -fuzzminimizetime 1x ./zonestore/
	$(GO) test -run XXX -fuzz FuzzEncode -fuzztime $(FUZZTIME) -fuzzminimizetime 1x ./wire/
	$(GO) test -run XXX -fuzz FuzzUpstreamAnswer -fuzztime $(FUZZTIME) -fuzzminimizetime 1x ./alias/
	$(GO) test -run XXX -fuzz '^FuzzTransfer$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1x ./zonestore/secondary/
	$(GO) test -run XXX -fuzz '^FuzzTransferIn$$' -fuzztime $(FUZZTIME) -fuzzminimizetime 1x ./zonestore/secondary/
	$(GO) test -run XXX -fuzz FuzzQueryThroughTheChain -fuzztime $(FUZZTIME) -fuzzminimizetime 1x ./plugin/zonestore/
	$(GO) test -run XXX -fuzz FuzzPacketThroughTheChain -fuzztime $(FUZZTIME) -fuzzminimizetime 1x ./plugin/codel/

# The container image (Dockerfile), where a container engine exists; the
# manifests in deploy/kubernetes/ use it.
image:
	docker build --build-arg VERSION=$(VERSION) -t ontime:$(VERSION) .

clean:
	rm -f coredns
	rm -rf bench/out
