#!/usr/bin/env bash
# A blocking plugin below codel: erratic delays 1 query in 20 by 50 ms (a
# sleep, not work), with and without codel in front of it, in one run,
# rounds interleaved. Throughput is measured closed-loop (bench/loadgen
# -inflight, 400 queries outstanding), server pinned to CPU 0
# (GOMAXPROCS=1), loadgen on CPU 1. A fixed pool of workers would answer
# at most workers / 50 ms of the delayed ones; codel replaces a worker that
# stops making progress while the CPU is idle.
#
#   bash bench/blocking.sh
#
# Bounded: ROUNDS x 2 runs of SECONDS_PER_RUN; servers are killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
ROUNDS=${ROUNDS:-3}
SECS=${SECONDS_PER_RUN:-5}
out=bench/out/blocking
mkdir -p "$out"
go build -o coredns ./cmd/coredns
go build -o "$out/loadgen" ./bench/loadgen
echo "example.org. A" > "$out/queries.txt"
port=15395
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null || true' EXIT
: > "$out/results.tsv"
for round in $(seq "$ROUNDS"); do
	for s in erratic codel; do
		extra=
		[ $s = codel ] && extra="codel\n    "
		printf ".:$port {\n    bind 127.0.0.1\n    ${extra}erratic {\n        delay 20 50ms\n    }\n}\n" > "$out/Corefile.$s"
		GOMAXPROCS=1 taskset -c 0 ./coredns -conf "$out/Corefile.$s" -quiet > "$out/$s.log" 2>&1 &
		pid=$!
		sleep 1
		qps=$(taskset -c 1 "$out/loadgen" -server 127.0.0.1:$port -queries "$out/queries.txt" -inflight 400 -duration "${SECS}s" -json |
			sed -n 's/.*"answered_qps":\([0-9.]*\).*/\1/p')
		kill $pid; wait $pid 2>/dev/null || true; pid=
		printf '%s\t%s\t%s\n' "$round" "$s" "$qps" >> "$out/results.tsv"
	done
done
awk -F'\t' '{ q[$2] += $3; n[$2]++ } END {
	e = q["erratic"] / n["erratic"]; c = q["codel"] / n["codel"]
	printf "erratic alone        %8.0f q/s\ncodel, then erratic  %8.0f q/s  (%.2fx)\n", e, c, c / e }' "$out/results.tsv"
