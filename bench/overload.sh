#!/usr/bin/env bash
# Overload test for codel: open-loop load (bench/loadgen) at 0.8x, 1.5x and
# 3x the server's capacity, against ontime with codel, with codel serving
# FIFO only (no adaptive LIFO), and without codel (CoreDNS's goroutine per
# packet), in one run. The zone mix is bench/workload's, with one query in
# 20 replaced by a new name under slow.example, signed online by the stock
# dnssec plugin with an RSA key: about 50x the cost of the others (the run
# measures the ratio). Server pinned to CPU 0 (GOMAXPROCS=1), loadgen to CPU 1;
# with CPUS=0,1 the server gets both (GOMAXPROCS=2) and loadgen shares them.
#
#   bash bench/overload.sh                       # 10 s per run
#   SECONDS_PER_RUN=5 LOADS="1.5" bash bench/overload.sh
#
# Bounded: each run sends for SECONDS_PER_RUN and waits 1 s for answers;
# every server it starts is killed on exit. Traffic stays on 127.0.0.1.
# Writes bench/out/overload/results.tsv and, where gnuplot exists,
# bench/overload.png.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
SECS=${SECONDS_PER_RUN:-10}
LOADS=${LOADS:-"0.8 1.5 3"}
SERVERS=${SERVERS:-"codel codel-fifo no-codel"}
BITS=${SLOW_BITS:-1280}
server_cpus=${CPUS:-0} load_cpus=1
procs=$(awk -F, '{print NF}' <<< "$server_cpus")
[ "$server_cpus" = 0 ] || load_cpus=$server_cpus
out=bench/out/overload
mkdir -p "$out"
command -v taskset >/dev/null || { echo "need taskset"; exit 1; }

go build -o coredns ./cmd/coredns
go build -o "$out/loadgen" ./bench/loadgen
rm -f "$out"/Kslow.example.*
go run ./bench/genzone -hosts 50000 -zone bench/out/db.bench -queries bench/out/queries.txt \
	-slow "$out" -slow-queries "$out/queries.txt" -slow-bits "$BITS"
key=$(ls "$out"/Kslow.example.*.key | tail -1)
key=$PWD/${key%.key}
grep -v slow.example "$out/queries.txt" > "$out/queries-plain.txt"
grep slow.example "$out/queries.txt" > "$out/queries-costly.txt"

port=15390
mport=15391
pid=
cleanup() { [ -n "$pid" ] && kill "$pid" 2>/dev/null || true; }
trap cleanup EXIT

start() { # name
	local extra=
	case $1 in
	codel) extra="codel" ;;
	codel-fifo) extra="codel {\n        fifo\n    }" ;;
	esac
	printf ".:$port {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:$mport\n    $extra\n    fastpack\n    zonestore $PWD/bench/out/db.bench bench.example\n    zonestore $PWD/$out/db.slow.example slow.example\n    dnssec slow.example {\n        key file $key\n    }\n}\n" > "$out/Corefile.$1"
	GOMAXPROCS=$procs taskset -c $server_cpus ./coredns -conf "$out/Corefile.$1" -quiet > "$out/$1.log" 2>&1 &
	pid=$!
	answering $port bench.example && return 0
	echo "$1 did not start"; cat "$out/$1.log"; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
load() { # queries rate [loadgen flags] -> one JSON line
	local q=$1 rate=$2
	shift 2
	taskset -c $load_cpus "$out/loadgen" -server 127.0.0.1:$port -queries "$q" -rate "$rate" -duration "${SECS}s" -json "$@"
}

# Capacity: what the server without codel answers with 200 queries always
# outstanding (closed loop, as dnsperf measures), for each part of the mix
# alone; the mix's capacity is what the CPU time of its parts allows,
# 1 / (costly share / costly rate + plain share / plain rate). Measured on
# the mix itself, closed loop over-counts: a goroutine per packet lets the
# cheap queries overtake the costly ones, which are given up on after a
# second while the loop refills with cheap ones (the run prints that
# figure too). Every load below is a multiple of the capacity.
start no-codel
closed=$(load "$out/queries.txt" 0 -inflight 200 | field answered_qps)
plain=$(load "$out/queries-plain.txt" 0 -inflight 200 | field answered_qps)
costly=$(load "$out/queries-costly.txt" 0 -inflight 200 | field answered_qps)
stop
share=$(echo "$(wc -l < "$out/queries-costly.txt") / $(wc -l < "$out/queries.txt")" | bc -l)
cap=$(echo "1 / ($share / $costly + (1 - $share) / $plain)" | bc -l)
printf 'capacity: mix %.0f q/s (%.1f%% costly); plain queries alone %.0f q/s, costly alone %.0f q/s: a costly query costs %.0fx a plain one; the mix closed loop: %.0f q/s\n' \
	"$cap" "$(echo "100 * $share" | bc -l)" "$plain" "$costly" "$(echo "$plain / $costly" | bc -l)" "$closed"

results="$out/results.tsv"
printf 'server\tload\toffered\tanswered_qps\ton_time_qps\ton_time_rate\tp50_ms\tp99_ms\tp999_ms\tunanswered\tpeak_rss_mb\tpeak_goroutines\tworkers\tcpu_pct\tdrops\n' > "$results"
for l in $LOADS; do
	rate=$(echo "$cap * $l" | bc -l | cut -d. -f1)
	for s in $SERVERS; do
		start "$s"
		peak=0
		( while sleep 0.2; do curl -s 127.0.0.1:$mport/metrics | awk '/^go_goroutines /{print $2}'; done ) > "$out/$s-$l.goroutines" 2>/dev/null &
		poller=$!
		t0=$(cpu_total "$pid") s0=$(date +%s.%N)
		r=$(load "$out/queries.txt" "$rate")
		cpu=$(echo "($(cpu_total "$pid") - $t0) / $(getconf CLK_TCK) / ($(date +%s.%N) - $s0) * 100" | bc -l)
		kill $poller 2>/dev/null || true; wait $poller 2>/dev/null || true
		peak=$(sort -n "$out/$s-$l.goroutines" | tail -1)
		rss=$(awk '/VmHWM/ {printf "%.0f", $2/1024}' /proc/$pid/status)
		metrics=$(curl -s 127.0.0.1:$mport/metrics)
		drops=$(echo "$metrics" | awk -F'[{}" ]' '/^coredns_codel_drops_total/ && $NF > 0 {printf "%s=%s ", $3, $NF}')
		workers=$(echo "$metrics" | awk '/^coredns_codel_workers/ {print $2}')
		stop
		printf '%s\t%s\t%s\t%.0f\t%.0f\t%.3f\t%.2f\t%.2f\t%.2f\t%s\t%s\t%s\t%s\t%.0f\t%s\n' "$s" "$l" "$rate" \
			"$(echo "$r" | field answered_qps)" "$(echo "$r" | field on_time_qps)" "$(echo "$r" | field on_time_rate)" \
			"$(echo "$r" | field p50_ms)" "$(echo "$r" | field p99_ms)" "$(echo "$r" | field p999_ms)" \
			"$(echo "$r" | field unanswered)" "$rss" "${peak:-?}" "${workers:--}" "$cpu" "${drops:--}" >> "$results"
	done
done
column -t -s$'\t' "$results"

if command -v gnuplot >/dev/null; then
	plots1= plots2=
	for s in $SERVERS; do
		awk -F'\t' -v s="$s" '$1 == s' "$results" > "$out/plot-$s.tsv"
		plots1="$plots1 '$out/plot-$s.tsv' using 2:8 with linespoints title '$s',"
		plots2="$plots2 '$out/plot-$s.tsv' using 2:6 with linespoints title '$s',"
	done
	gnuplot <<EOG
set terminal png size 1000,420
set output 'bench/overload.png'
set datafile separator "\t"
set multiplot layout 1,2 title "ontime under overload, one core; 1 query in 20, at random, costs 50x (bench/overload.sh)"
set xlabel "offered load / capacity"
set xrange [0.5:3.3]
set ylabel "p99 latency of answers (ms)"
set logscale y
set yrange [5:300]
plot ${plots1%,}
unset logscale y
set ylabel "on-time answers (<= 100 ms) / queries sent"
set yrange [0:1.05]
plot ${plots2%,}
unset multiplot
EOG
	echo "plot: bench/overload.png"
fi
