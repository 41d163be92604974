#!/usr/bin/env bash
# One build of ontime's full chain under two settings, A and B, run one
# after the other in alternating order, the load tool sharing the server's
# CPUs: queries a second and per CPU-second saturated (loadgen's batched
# closed loop, 400 outstanding over 8 sockets; LOADER=dnsperf: dnsperf), or CPU a
# query at an even rate (RATE set: bench/loadgen). A setting is GOMAXPROCS,
# codel's and zonestore's options and the server's environment: PA/PB
# (GOMAXPROCS, default 2), CA/CB (codel's options, ';'-separated, default
# none), ZA/ZB (zonestore's, the same way) and EA/EB (VAR=VALUE words added
# to the server's environment). SERVER_CPUS and LOAD_CPUS pin the two apart
# (both CPUS by default).
#
#   PA=2 PB=3 bash bench/settings-ab.sh                      # a spare P, saturated
#   CA="sockets 2" CB="sockets 2;workers 1" bash bench/settings-ab.sh
#   CA="sockets 2" CB="sockets 2;workers 1" RATE=20000 bash bench/settings-ab.sh
#   # huge pages (B: without), every query looked up, one core each:
#   PA=1 PB=1 ZA="replay 0" ZB="replay 0" EB=ONTIME_HUGE_PAGES=0 \
#     SERVER_CPUS=0 LOAD_CPUS=1 bash bench/settings-ab.sh
#
# Builds ./coredns and uses bench/out's zone and query mix (make bench makes
# them; QUERIES names another query file, the flood's
# bench/out/queries-flood.txt, say). Prints each round, the medians, and B against A per round.
# Bounded: ROUNDS runs of 7 s each; each server is stopped after its run.
# Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

ROUNDS=${ROUNDS:-6}
QUERIES=${QUERIES:-bench/out/queries.txt}
CPUS=${CPUS:-0,1}
SERVER_CPUS=${SERVER_CPUS:-$CPUS}
LOAD_CPUS=${LOAD_CPUS:-$CPUS}
[ -f bench/out/db.bench ] || { echo "no bench/out/db.bench: run make bench first"; exit 1; }
go build -o coredns ./cmd/coredns
port=15621
dir=$(mktemp -d)
pid=
trap '[ -n "$pid" ] && kill "$pid" 2>/dev/null; rm -rf "$dir"' EXIT
# block NAME OPTIONS: a directive with its ';'-separated options, if any.
block() {
	if [ -z "$2" ]; then
		echo "$1"
	else
		echo "$1 {\n        $(echo "$2" | sed 's/;/\\n        /g')\n    }"
	fi
}
for v in A B; do
	opts=CA zopts=ZA procs=PA env=EA
	[ $v = B ] && opts=CB zopts=ZB procs=PB env=EB
	codel=$(block codel "${!opts:-}")
	zonestore=$(block "zonestore $PWD/bench/out/db.bench bench.example" "${!zopts:-}")
	printf ".:$port {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:$((port + 2))\n    $codel\n    fastpack\n    $zonestore\n}\n" > "$dir/Corefile.$v"
	echo "$v: GOMAXPROCS=${!procs:-2}, codel: ${!opts:-(defaults)}, zonestore: ${!zopts:-(defaults)}, environment: ${!env:-(as is)}"
done
for i in $(seq "$ROUNDS"); do
	order="A B"
	[ $((i % 2)) = 0 ] && order="B A"
	for v in $order; do
		procs=PA env=EA
		[ $v = B ] && procs=PB env=EB
		# shellcheck disable=SC2086 # the environment is VAR=VALUE words
		env ${!env:-} GOMAXPROCS=${!procs:-2} taskset -c "$SERVER_CPUS" ./coredns -conf "$dir/Corefile.$v" -quiet > /dev/null 2>&1 &
		pid=$!
		answering $port bench.example
		if [ -n "${RATE:-}" ]; then
			taskset -c "$LOAD_CPUS" bench/out/bin/loadgen -server 127.0.0.1:$port -queries "$QUERIES" -rate "$RATE" -duration 7s -json > "$dir/load.$v" 2>&1 &
		elif [ "${LOADER:-loadgen}" = dnsperf ]; then
			taskset -c "$LOAD_CPUS" dnsperf -s 127.0.0.1 -p $port -d "$QUERIES" -l 7 -c 8 -q 400 -S 0 > "$dir/load.$v" 2>&1 &
		else
			taskset -c "$LOAD_CPUS" bench/out/bin/loadgen -server 127.0.0.1:$port -queries "$QUERIES" -inflight 400 -batch 32 -sockets 8 -duration 7s -json > "$dir/load.$v" 2>&1 &
		fi
		load=$!
		sleep 1.5
		read -r u0 s0 < <(cpu_ticks $pid)
		sleep 5
		read -r u1 s1 < <(cpu_ticks $pid)
		wait $load || true
		kill $pid
		wait $pid 2>/dev/null || true
		pid=
		if [ -z "${RATE:-}" ] && [ "${LOADER:-loadgen}" = dnsperf ]; then
			qps=$(awk '/Queries per second/ {print $4}' "$dir/load.$v")
		else
			qps=$(field answered_qps < "$dir/load.$v")
		fi
		echo "$i $v $qps $((u1 - u0 + s1 - s0))"
	done
done | tee "$dir/rounds" | python3 -c '
import statistics, sys
by = {}
for line in sys.stdin:
    print(line, end="")
    r, v, q, ticks = line.split()
    by.setdefault(r, {})[v] = (float(q), int(ticks))
rounds = [r for r in by if len(by[r]) == 2]
def med(v, f): return statistics.median(f(by[r][v]) for r in rounds)
# ticks are 1/100 s over the 5 s measured: CPU-seconds = ticks / 100
for v in ("A", "B"):
    print(v, "q/s median %.0f" % med(v, lambda x: x[0]), " per CPU-second %.0f" % med(v, lambda x: x[0] * 5 / (x[1] / 100)),
          " CPU us a query %.2f" % med(v, lambda x: x[1] * 10000 / (x[0] * 5)))
rq = [by[r]["B"][0] / by[r]["A"][0] for r in rounds]
rc = [(by[r]["B"][1] / by[r]["B"][0]) / (by[r]["A"][1] / by[r]["A"][0]) for r in rounds]
print("B/A q/s %.3f (%.2f-%.2f); CPU a query %.3f (%.2f-%.2f)" % (statistics.median(rq), min(rq), max(rq), statistics.median(rc), min(rc), max(rc)))
'
