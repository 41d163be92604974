#!/usr/bin/env bash
# Loopback load test: ontime's zonestore against stock CoreDNS's file plugin
# (built from the same module versions), zonestore behind fastpack (the
# wire encoder), the full chain (prometheus, codel, fastpack, zonestore),
# stock CoreDNS with whoami (a plugin
# that looks nothing up: the ceiling for any plugin on CoreDNS's own server)
# and Knot DNS, on the same generated zone and query mix, in one run, rounds
# interleaved. Each server is pinned to CPU 0 (GOMAXPROCS=1 for the Go
# servers), dnsperf to CPU 1.
#
#   bash bench/load.sh            # 3 rounds of 10 s per server
#   ROUNDS=1 SECONDS_PER_RUN=5 bash bench/load.sh
#
# Bounded: every run stops after SECONDS_PER_RUN, and every server it starts
# is killed on exit. Traffic goes to 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${ROUNDS:-3}
SECS=${SECONDS_PER_RUN:-10}
HOSTS=${HOSTS:-50000}
SERVERS=${SERVERS:-"zonestore fastpack full whoami file knot"}
out=bench/out
mkdir -p "$out"

for tool in dnsperf taskset; do command -v $tool >/dev/null || { echo "need $tool (make bench installs dnsperf)"; exit 1; }; done
go build -o coredns ./cmd/coredns
go build -o "$out/coredns-stock" github.com/coredns/coredns
go run ./bench/genzone -hosts "$HOSTS" -zone "$out/db.bench" -queries "$out/queries.txt"

pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

port=15353
start_server() { # name -> starts it on $port, sets $pid
	local name=$1 dir="$out/$1"
	mkdir -p "$dir"
	case $name in
	zonestore|fastpack|full|file|whoami)
		local bin=./coredns plugins=$name
		case $name in
		file|whoami) bin="$out/coredns-stock" ;;
		fastpack) plugins="fastpack\n    zonestore" ;;
		full) plugins="prometheus 127.0.0.1:$((port + 1))\n    codel\n    fastpack\n    zonestore" ;;
		esac
		if [ "$name" = whoami ]; then # the ceiling: answers without looking anything up
			printf '.:%d {\n    bind 127.0.0.1\n    whoami\n}\n' "$port" > "$dir/Corefile"
		else
			printf ".:%d {\n    bind 127.0.0.1\n    $plugins %s %s\n}\n" "$port" "$PWD/$out/db.bench" bench.example > "$dir/Corefile"
		fi
		GOMAXPROCS=1 taskset -c 0 "$bin" -conf "$dir/Corefile" -quiet > "$dir/log" 2>&1 &
		;;
	knot)
		cat > "$dir/knot.conf" <<EOC
server:
    listen: 127.0.0.1@$port
    rundir: $PWD/$dir
    udp-workers: 1
    tcp-workers: 1
    background-workers: 1
$( [ "$(id -u)" = 0 ] && echo "    user: root:root" )
database:
    storage: $PWD/$dir
log:
  - target: stderr
    any: error
zone:
  - domain: bench.example
    file: $PWD/$out/db.bench
    zonefile-sync: -1
    journal-content: none
EOC
		taskset -c 0 knotd -c "$dir/knot.conf" > "$dir/log" 2>&1 &
		;;
	esac
	pid=$!
	pids+=("$pid")
	answering "$port" bench.example && return 0
	echo "$name did not start:"; cat "$dir/log"; exit 1
}

results="$out/results.tsv"
: > "$results"
for round in $(seq "$ROUNDS"); do
	for s in $SERVERS; do
		start_server "$s"
		taskset -c 1 dnsperf -s 127.0.0.1 -p "$port" -d "$out/queries.txt" -l "$SECS" -c 4 -q 200 -S 0 > "$out/$s.dnsperf" 2>&1 || true
		qps=$(awk '/Queries per second/ {print $4}' "$out/$s.dnsperf")
		lat=$(awk '/Average Latency/ {print $4}' "$out/$s.dnsperf")
		lost=$(awk '/Queries lost/ {print $3}' "$out/$s.dnsperf")
		printf '%s\t%s\t%s\t%s\t%s\n' "$round" "$s" "${qps:-0}" "${lat:-0}" "${lost:-?}" >> "$results"
		kill "$pid"; wait "$pid" 2>/dev/null || true
	done
done

echo
echo "$HOSTS-host zone, ${SECS}s per run, $ROUNDS rounds interleaved; server on CPU 0, dnsperf on CPU 1"
awk -F'\t' '
	{ q[$2] += $3; l[$2] += $4; n[$2]++; if (!($2 in order)) { order[$2] = ++k; names[k] = $2 } }
	END {
		base = ("file" in q) ? q["file"] / n["file"] : 0
		printf "%-10s %12s %14s %10s\n", "server", "queries/s", "avg latency", "x file"
		for (i = 1; i <= k; i++) { s = names[i]; m = q[s] / n[s]
			printf "%-10s %12.0f %11.0f us %10.2f\n", s, m, l[s] / n[s] * 1e6, base ? m / base : 0 }
	}' "$results"
