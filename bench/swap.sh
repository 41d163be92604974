#!/usr/bin/env bash
# Swaps under load: a 170,000-name zone (the workload generator's) is
# re-published every SWAP_EVERY seconds (a new file, a new serial, one
# name added; zonestore re-reads it: `reload 1s`), SWAPS times, while
# bench/loadgen asks, at a steady RATE, for names that every version holds.
# Any answer but NOERROR with records (NXDOMAIN, NODATA, SERVFAIL,
# REFUSED) is wrong. Resident memory is read after every swap; p99 is
# compared with a run of BASE_SECONDS without swaps, same server, same load.
# The server (prometheus, codel, fastpack, zonestore) is pinned to CPU 0
# (GOMAXPROCS=1): the re-reads share its one CPU with the queries. loadgen
# is on CPU 1.
#
#   bash bench/swap.sh        # HOSTS=170000 SWAPS=100 SWAP_EVERY=5 RATE=10000 BASE_SECONDS=60
#   PAIRS=5 bash bench/swap.sh
#
# PAIRS=N interleaves instead: N pairs of a window without swaps and a
# window with SWAPS/N swaps, both SWAPS/N x SWAP_EVERY seconds long, and
# compares the medians of the windows' p99s. One baseline window before all
# the swaps says as much about whether the collector ran in it as about the
# swaps; and windows of unequal length are not compared fairly either (a
# short one more often holds none of the rare slow moments a long one
# holds: the first PAIRS runs had 12 s without swaps against 100 s with).
#
# Bounded: BASE_SECONDS (with PAIRS, SWAPS x SWAP_EVERY) + SWAPS x
# SWAP_EVERY seconds of load; the server is killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
HOSTS=${HOSTS:-170000}
SWAPS=${SWAPS:-100}
EVERY=${SWAP_EVERY:-5}
RATE=${RATE:-10000}
BASE=${BASE_SECONDS:-60}
CPUS=${SERVER_CPUS:-0}     # the server's CPUs (taskset -c); GOMAXPROCS is their count
LOADGEN_CPU=${LOADGEN_CPU:-1}
out=bench/out/swap
mkdir -p "$out"
go build -o coredns ./cmd/coredns
go build -o "$out/loadgen" ./bench/loadgen
go run ./bench/genzone -hosts "$HOSTS" -zone "$out/db.base" -queries "$out/unused.txt" -count 1
awk -v n="$HOSTS" 'BEGIN { srand(7); for (i = 0; i < 20000; i++) printf "host%d.bench.example. A\n", int(rand() * n) }' > "$out/queries.txt"

version() { # serial
	sed "s/^@ SOA ns1 hostmaster 1 /@ SOA ns1 hostmaster $1 /" "$out/db.base" > "$out/db.tmp"
	printf 'v%d A 192.0.2.1\n' "$1" >> "$out/db.tmp"
	mv "$out/db.tmp" "$out/db.bench"
}
rss() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; } # KiB

port=15398
mport=15399
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null || true' EXIT
version 1
printf ".:$port {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:$mport\n    codel\n    fastpack\n    zonestore $PWD/$out/db.bench bench.example {\n        reload 1s\n    }\n}\n" > "$out/Corefile"
GOMAXPROCS=$(echo "$CPUS" | tr ',' '\n' | wc -l) taskset -c "$CPUS" ./coredns -conf "$out/Corefile" -quiet > "$out/coredns.log" 2>&1 &
pid=$!
answering $port bench.example 600 || { echo "the server did not start"; cat "$out/coredns.log"; exit 1; }
load() { taskset -c "$LOADGEN_CPU" "$out/loadgen" -server 127.0.0.1:$port -queries "$out/queries.txt" -rate "$RATE" -duration "$1" -max 1000000000 -warmup 1s -json; }
wrong() { echo "$(echo "$1" | field servfail) + $(echo "$1" | field refused) + $(echo "$1" | field nxdomain) + $(echo "$1" | field nodata)" | bc; }

echo "rss_kib_before $(rss $pid)"
: > "$out/rss.tsv"
n=1 # the zone's serial
swapping() { # SWAPS_IN_WINDOW: swaps while loadgen runs, its JSON to $out/swaps.json (not a subshell: n goes on)
	load "$(($1 * EVERY))s" > "$out/swaps.json" &
	local lg=$!
	for _ in $(seq "$1"); do
		sleep "$EVERY"
		n=$((n + 1))
		version "$n"
		printf '%d\t%s\n' "$n" "$(rss $pid)" >> "$out/rss.tsv"
	done
	wait $lg
}
memory() {
	local metrics
	metrics=$(curl -s "http://127.0.0.1:$mport/metrics")
	echo "codel's drops (every window): $(echo "$metrics" | awk -F'[{}" ]' '/^coredns_codel_drops_total/ && $NF > 0 {printf "%s=%s ", $3, $NF}')"
	published=$(echo "$metrics" | sed -n 's/^coredns_zonestore_publishes_total{zone="bench.example."} //p')
	serial=$(dig +short @127.0.0.1 -p $port bench.example SOA | awk '{ print $3 }')
	printf 'versions published: %s (serial now %s); resident memory (MiB) after swaps 1, 10, 50, last: %s\n' "$published" "$serial" \
		"$(awk 'NR == 1 || NR == 10 || NR == 50 { printf "%.0f, ", $2 / 1024 } END { printf "%.0f (max %.0f)", $2 / 1024, max / 1024 } { if ($2 > max) max = $2 }' "$out/rss.tsv")"
}

if [ -n "${PAIRS:-}" ]; then
	printf '%-6s %-6s %10s %10s %10s %10s %8s %10s\n' pair run answered p50_ms p99_ms p99.9_ms wrong unanswered | tee "$out/results.txt"
	for p in $(seq "$PAIRS"); do
		for r in base swaps; do
			if [ $r = base ]; then j=$(load "$((SWAPS / PAIRS * EVERY))s"); else swapping $((SWAPS / PAIRS)); j=$(cat "$out/swaps.json"); fi
			printf '%-6s %-6s %10s %10s %10s %10s %8s %10s\n' "$p" $r "$(echo "$j" | field answered)" "$(echo "$j" | field p50_ms)" \
				"$(echo "$j" | field p99_ms)" "$(echo "$j" | field p999_ms)" "$(wrong "$j")" "$(echo "$j" | field unanswered)" | tee -a "$out/results.txt"
		done
	done
	median() { awk -v r="$1" 'NR > 1 && $2 == r { print $5 }' "$out/results.txt" | sort -n | awk '{ v[NR] = $1 } END { print NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
	mb=$(median base) ms=$(median swaps)
	printf "median of the windows' p99: without swaps %s ms, with swaps %s ms: %.2fx; wrong answers %s\n" "$mb" "$ms" \
		"$(echo "$ms / $mb" | bc -l)" "$(awk 'NR > 1 && $2 == "swaps" { w += $7 } END { print w + 0 }' "$out/results.txt")"
	memory
	exit 0
fi

base=$(load "${BASE}s")
echo "baseline: $base" > "$out/results.txt"
swapping "$SWAPS"
swaps=$(cat "$out/swaps.json")
echo "swaps: $swaps" >> "$out/results.txt"

printf '%-10s %10s %10s %10s %10s %12s %10s\n' run answered p50_ms p99_ms p99.9_ms wrong unanswered
for r in base swaps; do
	j=${!r}
	printf '%-10s %10s %10s %10s %10s %12s %10s\n' $r "$(echo "$j" | field answered)" "$(echo "$j" | field p50_ms)" \
		"$(echo "$j" | field p99_ms)" "$(echo "$j" | field p999_ms)" "$(wrong "$j")" "$(echo "$j" | field unanswered)"
done
printf 'p99 with swaps / without: %.2fx\n' "$(echo "$(echo "$swaps" | field p99_ms) / $(echo "$base" | field p99_ms)" | bc -l)"
memory
