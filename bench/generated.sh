#!/usr/bin/env bash
# ontime as a hidden primary: ZONES small zones (bench/genzones) in a
# directory with `generate_catalog`, on CPU 1, and each consumer in turn
# on CPU 0 told of the catalog alone: ontime (the chain with `catalog`,
# GOMAXPROCS=1) and Knot DNS (`catalog-role: interpret`, one worker of each
# kind). For each: the seconds until every zone of a sample of 201
# answers. The primary rescans its directory every RESCAN (1m): a zone
# file added reaches the consumers by the catalog's next version (NOTIFY,
# an IXFR of the catalog, an AXFR of the zone), which
# test/produce_test.go times out on; at 100,000 files a rescan every 2 s
# kept the primary's CPU busy and the consumers took 7 times as long to
# follow (bench/README.md, 2026-12-07 19:17).
#
#   bash bench/generated.sh                 # ZONES=100000
#   ZONES=10000 CONSUMERS=knot bash bench/generated.sh
#
# Bounded: LOAD_TIMEOUT for each wait; every server it started is stopped
# at exit. Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ZONES=${ZONES:-100000}
RESCAN=${RESCAN:-1m}
CONSUMERS=${CONSUMERS:-ontime knot}
LOAD_TIMEOUT=${LOAD_TIMEOUT:-600}
out=bench/out/generated-run
mkdir -p "$out"
go build -o coredns ./cmd/coredns
many_zones "$out" "$ZONES"
pport=15610
sport=15600
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done' EXIT
now() { date +%s.%N; }
since() { echo "$(now) - $1" | bc; }
wait_for() { # what, test command...
	local what=$1 i
	shift
	for i in $(seq $((LOAD_TIMEOUT * 5))); do
		"$@" && return 0
		sleep 0.2
	done
	echo "$what: not in ${LOAD_TIMEOUT}s" >&2
	exit 1
}

printf ".:$pport {\n    bind 127.0.0.1\n    transfer {\n        to * 127.0.0.1:$sport\n    }\n    zonestore {\n        directory $PWD/$out/zones\n        reload $RESCAN\n        generate_catalog catalog.invalid\n    }\n}\n" > "$out/Corefile.primary"
t=$(now)
taskset -c 1 ./coredns -conf "$out/Corefile.primary" > "$out/primary.log" 2>&1 &
pids+=($!)
wait_for "the primary's catalog" answered $pport catalog.invalid SOA
echo "primary: $ZONES zones and their catalog in $(since "$t") s"

printf ".:$sport {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:$((sport + 1))\n    codel\n    fastpack\n    zonestore {\n        catalog catalog.invalid 127.0.0.1:$pport\n    }\n}\n" > "$out/Corefile.ontime"
user=; [ "$(id -u)" = 0 ] && user="    user: root:root"
{ printf "server:\n    listen: 127.0.0.1@$sport\n    rundir: $PWD/$out/knot\n    udp-workers: 1\n    tcp-workers: 1\n    background-workers: 1\n$user\n"
  printf "log:\n  - target: stderr\n    any: warning\ndatabase:\n    storage: $PWD/$out/knot\n"
  printf "remote:\n  - id: primary\n    address: 127.0.0.1@$pport\nacl:\n  - id: notify\n    address: 127.0.0.1\n    action: notify\n"
  printf "template:\n  - id: default\n    storage: $PWD/$out/knot\n    zonefile-sync: -1\n    journal-content: none\n"
  printf "  - id: member\n    storage: $PWD/$out/knot\n    master: primary\n    acl: notify\n    zonefile-sync: -1\n    journal-content: none\n"
  printf "zone:\n  - domain: catalog.invalid\n    master: primary\n    acl: notify\n    catalog-role: interpret\n    catalog-template: member\n"; } > "$out/knot.conf"
for c in $CONSUMERS; do
	t=$(now)
	case $c in
	ontime) GOMAXPROCS=1 taskset -c 0 ./coredns -conf "$out/Corefile.ontime" > "$out/ontime.log" 2>&1 & ;;
	knot)
		rm -rf "$out/knot" && mkdir -p "$out/knot"
		taskset -c 0 knotd -c "$out/knot.conf" > "$out/knot.log" 2>&1 &
		;;
	*) echo "CONSUMERS: ontime, knot"; exit 1 ;;
	esac
	pid=$!
	pids+=("$pid")
	wait_for "$c to serve the sample" sample_served $sport "$out"
	echo "$c: the $ZONES zones in $(since "$t") s"
	kill "$pid"; wait "$pid" 2>/dev/null || true
done
