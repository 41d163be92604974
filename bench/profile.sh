#!/usr/bin/env bash
# CPU profiles under load: stock CoreDNS with file (a goroutine per packet)
# and ontime's full chain (prometheus, codel, fastpack, zonestore), each
# pinned to CPU 0 (GOMAXPROCS=1) under dnsperf on CPU 1, a 5 s profile
# (PROFILE_SECONDS) from the pprof plugin in the middle of a 9 s run (4 s
# longer than the profile). Prints each one's share of
# CPU in runtime.newstack and runtime.morestack (growing fresh goroutine
# stacks), and its top functions. Profiles go to bench/out/profile/.
#
#   bash bench/profile.sh
#
# Bounded: one 9 s run per server; servers are killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
out=bench/out/profile
mkdir -p "$out"
for tool in dnsperf taskset curl; do command -v $tool >/dev/null || { echo "need $tool"; exit 1; }; done
go build -o coredns ./cmd/coredns
go build -o bench/out/coredns-stock github.com/coredns/coredns
[ -f bench/out/db.bench ] || go run ./bench/genzone -hosts 50000 -zone bench/out/db.bench -queries bench/out/queries.txt

port=15393
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null || true' EXIT
printf '%-6s %10s %10s %10s\n' server 'queries/s' newstack morestack
for s in ${SERVERS:-file full}; do
	bin=./coredns plugins="prometheus 127.0.0.1:$((port + 2))\n    codel\n    fastpack\n    zonestore"
	[ $s = file ] && bin=bench/out/coredns-stock plugins=file
	printf ".:$port {\n    bind 127.0.0.1\n    pprof 127.0.0.1:$((port + 1))\n    $plugins $PWD/bench/out/db.bench bench.example\n}\n" > "$out/Corefile.$s"
	GOMAXPROCS=1 taskset -c 0 $bin -conf "$out/Corefile.$s" -quiet > "$out/$s.log" 2>&1 &
	pid=$!
	answering $port bench.example || true
	taskset -c 1 dnsperf -s 127.0.0.1 -p $port -d bench/out/queries.txt -l $((${PROFILE_SECONDS:-5} + 4)) -c 4 -q 200 -S 0 > "$out/$s.dnsperf" 2>&1 &
	load=$!
	sleep 2
	curl -s -o "$out/$s.prof" "http://127.0.0.1:$((port + 1))/debug/pprof/profile?seconds=${PROFILE_SECONDS:-5}"
	wait $load || true
	kill $pid; wait $pid 2>/dev/null || true; pid=
	go tool pprof -top -nodecount=1000 $bin "$out/$s.prof" > "$out/$s.top" 2>/dev/null
	share() { awk -v f="$1" '$6 == f {print $5; found=1} END {if (!found) print "0%"}' "$out/$s.top"; }
	printf '%-6s %10.0f %10s %10s\n' $s "$(awk '/Queries per second/ {print $4}' "$out/$s.dnsperf")" "$(share runtime.newstack)" "$(share runtime.morestack)"
done
for s in ${SERVERS:-file full}; do
	echo; echo "$s: top 12 by flat CPU"
	sed -n '6,18p' "$out/$s.top"
done
