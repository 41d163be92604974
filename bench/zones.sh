#!/usr/bin/env bash
# Many zones: ZONES small zones (ten records each, bench/genzones) in one
# directory, loaded by ontime (`zonestore { directory ... }`) and by Knot
# DNS (one zone entry each), in one run: the time from start until the
# zones answer, resident memory per record, and closed-loop throughput on
# a query mix spread over all the zones (an address, a mail exchanger, a
# name that does not exist). Each server is pinned to CPU 0 (ontime
# GOMAXPROCS=1; Knot with one UDP, one TCP and one background worker),
# bench/loadgen to CPU 1.
#
#   bash bench/zones.sh            # ZONES=100000 SECONDS_PER_RUN=10
#
# SERVERS="ontime" runs one of them ("ontime": zonestore alone; "full":
# the issue's chain, prometheus, codel, fastpack and zonestore, over the
# same directory; "lookup": the full chain keeping no answers, `replay 0`,
# so that every query is looked up, as Knot looks each one up); KEEP_ZONES=1
# keeps the zones written by the last run. "secondary" and "knot-secondary"
# take the zones by transfer instead: a Knot on CPU 1 serves them all and
# a catalog zone (RFC 9432) that names them, and ontime (the issue's
# chain, `catalog`, its `transfers` workers) or Knot (`catalog-role:
# interpret`, one background worker; "knot-pool" keeps up to 10
# connections open for later transfers, `remote-pool-limit: 10`, where
# "knot-secondary" has Knot's default, a connection a transfer) follows
# the catalog; "load" is then the time until every zone of the sample is
# transferred. "saved" is
# "secondary" with `storage` (a fresh directory: a copy of each zone
# written as it is transferred), and "restart", after it, the same server
# started again with its primary stopped: "load" is then the time until
# the sample answers from the copies. "knot-saved" and "knot-restart" are
# the same for Knot, its zone files written at once (`zonefile-sync: 0`).
#
# WINDOWS=N runs the load N times back to back and reports the median
# window's figures (each window's on stderr).
#
# Bounded: each server is given LOAD_TIMEOUT seconds to load and WINDOWS
# runs of SECONDS_PER_RUN; each is killed when measured.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ZONES=${ZONES:-100000}
SECS=${SECONDS_PER_RUN:-10}
LOAD_TIMEOUT=${LOAD_TIMEOUT:-1200}
out=bench/out/zones-run
mkdir -p "$out"
# BIN=path runs that ontime binary (an A/B of two builds) instead of
# building the working tree's.
bin=${BIN:-./coredns}
[ -n "${BIN:-}" ] || go build -o coredns ./cmd/coredns
go build -o "$out/loadgen" ./bench/loadgen
SERVERS=${SERVERS:-ontime full lookup knot}
if [ -z "${KEEP_ZONES:-}" ] || [ ! -d "$out/zones" ]; then
	echo "generating $ZONES zones"
	go run ./bench/genzones -zones "$ZONES" -dir "$out/zones" -knot "$out/zones.knot.conf" -queries "$out/queries.txt"
fi
records=$((ZONES * 10))
zone_sample "$out" "$ZONES"

port=15400
primary_port=$((port + 10))
pid=
primary_pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; [ -n "$primary_pid" ] && kill $primary_pid 2>/dev/null || true' EXIT
user=; [ "$(id -u)" = 0 ] && user="    user: root:root"
rss() { awk '/VmRSS/ { print $2 }' "/proc/$1/status"; } # KiB
now() { date +%s.%N; }
# wait_loaded: the seconds until every name of the sample answers with an
# address (sample_served).
wait_loaded() { # start-time -> seconds
	for _ in $(seq $((LOAD_TIMEOUT * 5))); do
		if sample_served $port "$out"; then echo "$(now) - $1" | bc; return 0; fi
		sleep 0.2
	done
	echo "did not load in ${LOAD_TIMEOUT}s" >&2; exit 1
}
# measure: WINDOWS runs of the load back to back (1 by default), the
# median's figures reported: the first window after a bulk load read a
# fifth lower than the next three (bench/README.md, 2026-12-07 16:27),
# and one window says little alone.
WINDOWS=${WINDOWS:-1}
measure() { # name
	local t rss_kib q w qs=()
	t=$(wait_loaded "$start")
	sleep 2
	rss_kib=$(rss "$pid")
	for w in $(seq "$WINDOWS"); do
		q=$(taskset -c 1 "$out/loadgen" -server 127.0.0.1:$port -queries "$out/queries.txt" -inflight 200 -duration "${SECS}s" -json)
		qs+=("$(echo "$q" | field answered_qps) $(echo "$q" | field p99_ms) $(( $(echo "$q" | field servfail) + $(echo "$q" | field refused) ))")
	done
	[ "$WINDOWS" -gt 1 ] && printf '%s windows (q/s p99 errors):\n%s\n' "$1" "$(printf '  %s\n' "${qs[@]}")" >&2
	read -r qps p99 errs < <(printf '%s\n' "${qs[@]}" | sort -g | sed -n "$(( (WINDOWS + 1) / 2 ))p")
	printf '%s\t%.1f\t%d\t%d\t%s\t%s\t%s\n' "$1" "$t" "$rss_kib" "$(( (rss_kib - empty) * 1024 / records ))" \
		"$qps" "$p99" "$errs" >> "$out/results.tsv"
	kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
}
: > "$out/results.tsv"

# ontime_server name plugins [option [source]]: an empty server first, for
# the memory a zone adds, then the zones; plugins go before zonestore,
# option inside its block, and source in place of the zones' directory.
ontime_server() {
mkdir -p "$out/empty"
printf ".:$port {\n    bind 127.0.0.1\n$2    zonestore {\n        directory $PWD/$out/empty\n        reload 0\n${3:-}    }\n}\n" > "$out/Corefile.empty"
GOMAXPROCS=1 taskset -c 0 "$bin" -conf "$out/Corefile.empty" -quiet > "$out/$1-empty.log" 2>&1 &
pid=$!; sleep 2; empty=$(rss $pid); kill $pid; wait $pid 2>/dev/null || true; pid=
source="${4:-        directory $PWD/$out/zones\n        reload 0\n}"
printf ".:$port {\n    bind 127.0.0.1\n$2    zonestore {\n$source${3:-}    }\n}\n" > "$out/Corefile"
start=$(now)
GOMAXPROCS=1 taskset -c 0 "$bin" -conf "$out/Corefile" -quiet > "$out/$1.log" 2>&1 &
pid=$!
measure "$1"
}
run_ontime() { ontime_server ontime ""; }

# The secondaries' primary: Knot on CPU 1 (the load's, idle while they
# transfer), every zone and the catalog zone naming them, started once.
start_primary() {
	[ -n "$primary_pid" ] && return
	catalog_primary "$out" $primary_port
	taskset -c 1 knotd -c "$out/primary.conf" > "$out/primary.log" 2>&1 &
	primary_pid=$!
	for _ in $(seq $((LOAD_TIMEOUT * 5))); do
		last_zone_served $primary_port "$out" && return
		sleep 0.2
	done
	echo "the primary did not load in ${LOAD_TIMEOUT}s" >&2; exit 1
}
run_secondary() {
	start_primary
	ontime_server secondary "    prometheus 127.0.0.1:$((port + 1))\n    codel\n    fastpack\n" "" "        catalog catalog.invalid 127.0.0.1:$primary_port\n"
}
run_full() { ontime_server full "    prometheus 127.0.0.1:$((port + 1))\n    codel\n    fastpack\n"; }
run_lookup() { ontime_server lookup "    prometheus 127.0.0.1:$((port + 1))\n    codel\n    fastpack\n" "        replay 0\n"; }

run_knot() {
# Knot: the same files, one zone entry each.
rm -rf "$out/knot"; mkdir -p "$out/knot"
user=; [ "$(id -u)" = 0 ] && user="    user: root:root"
knotconf() { # zone-list-file
	printf "server:\n    listen: 127.0.0.1@$port\n    rundir: $PWD/$out/knot\n    udp-workers: 1\n    tcp-workers: 1\n    background-workers: 1\n$user\n"
	printf "log:\n  - target: stderr\n    any: warning\n"
	printf "database:\n    storage: $PWD/$out/knot\n"
	printf "template:\n  - id: default\n    zonefile-sync: -1\n    zonefile-load: whole\n    journal-content: none\n"
	cat "$1"
}
: > "$out/nozones"
knotconf "$out/nozones" > "$out/knot.empty.conf"
taskset -c 0 knotd -c "$out/knot.empty.conf" > "$out/knot-empty.log" 2>&1 &
pid=$!; sleep 2; empty=$(rss $pid); kill $pid; wait $pid 2>/dev/null || true; pid=
rm -rf "$out/knot"; mkdir -p "$out/knot"
knotconf "$out/zones.knot.conf" > "$out/knot.conf"
start=$(now)
taskset -c 0 knotd -c "$out/knot.conf" > "$out/knot.log" 2>&1 &
pid=$!
measure knot
}
run_saved() {
	start_primary
	rm -rf "$out/storage"
	ontime_server saved "    prometheus 127.0.0.1:$((port + 1))\n    codel\n    fastpack\n" "" "        catalog catalog.invalid 127.0.0.1:$primary_port\n        storage $PWD/$out/storage\n"
}
run_restart() {
	[ -d "$out/storage" ] || { echo "restart runs after saved" >&2; exit 1; }
	[ -n "$primary_pid" ] && { kill "$primary_pid"; wait "$primary_pid" 2>/dev/null || true; primary_pid=; }
	ontime_server restart "    prometheus 127.0.0.1:$((port + 1))\n    codel\n    fastpack\n" "" "        catalog catalog.invalid 127.0.0.1:$primary_port\n        storage $PWD/$out/storage\n"
}
# knot_secondary name sync keep [pool]: Knot following the catalog, its
# zone files written at once (sync 0) or never (-1); keep: its storage
# directory kept from the run before (a restart), the primary stopped;
# pool: its remote-pool-limit, the outgoing TCP connections it keeps open
# for later transfers (0, its default: a connection a transfer).
knot_secondary() {
[ -n "$3" ] || start_primary
sync=$2
pool=${4:-0}
base() {
	printf "server:\n    listen: 127.0.0.1@$port\n    rundir: $PWD/$out/knot\n    udp-workers: 1\n    tcp-workers: 1\n    background-workers: 1\n    remote-pool-limit: $pool\n$user\n"
	printf "log:\n  - target: stderr\n    any: warning\n"
	printf "database:\n    storage: $PWD/$out/knot\n"
	printf "remote:\n  - id: primary\n    address: 127.0.0.1@$primary_port\n"
	printf "template:\n  - id: default\n    storage: $PWD/$out/knot\n    zonefile-sync: $sync\n    journal-content: none\n  - id: member\n    storage: $PWD/$out/knot\n    master: primary\n    zonefile-sync: $sync\n    journal-content: none\n"
}
mkdir -p "$out/knot-empty-run"
{ base | sed "s|$PWD/$out/knot\$|$PWD/$out/knot-empty-run|"; printf "zone:\n  - domain: empty.invalid\n    master: primary\n"; } > "$out/knot.empty.conf"
taskset -c 0 knotd -c "$out/knot.empty.conf" > "$out/knot-empty.log" 2>&1 &
pid=$!; sleep 2; empty=$(rss $pid); kill $pid; wait $pid 2>/dev/null || true; pid=
[ -n "$3" ] || { rm -rf "$out/knot"; mkdir -p "$out/knot"; }
{ base; printf "zone:\n  - domain: catalog.invalid\n    master: primary\n    catalog-role: interpret\n    catalog-template: member\n"; } > "$out/knot.conf"
start=$(now)
taskset -c 0 knotd -c "$out/knot.conf" > "$out/knot.log" 2>&1 &
pid=$!
measure "$1"
}
run_knot-secondary() { knot_secondary knot-secondary -1 ""; }
run_knot-pool() { knot_secondary knot-pool -1 "" 10; }
run_knot-saved() { knot_secondary knot-saved 0 ""; }
run_knot-restart() {
	[ -d "$out/knot" ] || { echo "knot-restart runs after knot-saved" >&2; exit 1; }
	[ -n "$primary_pid" ] && { kill "$primary_pid"; wait "$primary_pid" 2>/dev/null || true; primary_pid=; }
	knot_secondary knot-restart 0 keep
}
for s in $SERVERS; do "run_$s"; done
[ -n "$primary_pid" ] && { kill "$primary_pid"; wait "$primary_pid" 2>/dev/null || true; primary_pid=; }

printf '%-8s %12s %14s %16s %12s %10s %8s\n' server "load (s)" "RSS (MiB)" "bytes/record" "q/s" "p99 (ms)" errors
awk -F'\t' '{ printf "%-8s %12.1f %14.0f %16d %12.0f %10.2f %8d\n", $1, $2, $3 / 1024, $4, $5, $6, $7 }' "$out/results.tsv"
awk -F'\t' '{ v[$1] = $0; l[$1] = $2; m[$1] = $4; q[$1] = $5 } END {
	for (s in l) if (s != "knot" && ("knot" in l))
		printf "%s / Knot: load time %.2fx, memory per record %.2fx, throughput %.2fx\n", s, l[s] / l["knot"], m[s] / m["knot"], q[s] / q["knot"] }' "$out/results.tsv"
echo "($ZONES zones, $records records)"
