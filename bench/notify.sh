#!/usr/bin/env bash
# A NOTIFY for every zone at once, as a primary sends when it starts
# again: what it costs a secondary that serves them all already. ZONES
# small zones (bench/genzones) and a catalog zone naming them, served by
# Knot DNS on CPU 1, which sends its NOTIFY (the zone's SOA in the answer
# section) to ontime; ontime (the issue's chain, `catalog`, GOMAXPROCS=1 on
# CPU 0) follows the catalog. Once the sample answers and the NOTIFYs Knot
# sends as it loads its zones are over, `knotc zone-notify` has Knot notify
# every zone, and the script counts what ontime then asks
# its primary (its SOA queries that find the zone current, transfers_total
# {type="current"}) and the time until the last one.
#
#   bash bench/notify.sh                    # ZONES=10000, the working tree
#   BASE=a1a9bbb ROUNDS=2 bash bench/notify.sh
#
# BASE=<commit> runs that commit's build too, the two alternated over
# ROUNDS. CHANGE=1 gives every zone a new serial on Knot first (its files
# rewritten, `knotc zone-reload`, which sends the NOTIFYs): each zone is
# then transferred, and the line counts the AXFRs and IXFRs published too,
# and codel's drops. Each line also counts the datagrams the kernel
# dropped for a full UDP receive buffer over the run (/proc/net/snmp's
# RcvbufErrors: every socket of the machine, Knot's too), where a NOTIFY
# lost before ontime read it would show. Each run's metrics are left in the run's directory
# (metrics.BUILD.ROUND.txt). Prints a line a run: NOTIFY acknowledged, counted current, SOA
# queries sent, and seconds from the NOTIFY until ontime's last one
# (or until the last NOTIFY was counted, where it sent none).
# Bounded: LOAD_TIMEOUT for each load, SETTLE_TIMEOUT for the NOTIFYs'
# aftermath; everything started is stopped at exit. Traffic stays on
# 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ZONES=${ZONES:-10000}
ROUNDS=${ROUNDS:-1}
LOAD_TIMEOUT=${LOAD_TIMEOUT:-300}
SETTLE_TIMEOUT=${SETTLE_TIMEOUT:-120}
out=bench/out/notify-run
mkdir -p "$out"
go build -o "$out/coredns-new" ./cmd/coredns
builds=new
if [ -n "${BASE:-}" ]; then
	rm -rf "$out/base-src"
	git worktree add -f --detach "$out/base-src" "$BASE" >/dev/null
	(cd "$out/base-src" && go build -o ../coredns-old ./cmd/coredns)
	git worktree remove -f "$out/base-src"
	builds="old new"
fi
many_zones "$out" "$ZONES"

port=15500
primary_port=$((port + 10))
pid=
primary_pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; [ -n "$primary_pid" ] && kill $primary_pid 2>/dev/null || true' EXIT
now() { date +%s.%N; }

# The primary: every zone and the catalog, each notifying ontime's port.
catalog_primary "$out" $primary_port $port
taskset -c 1 knotd -c "$out/primary.conf" > "$out/primary.log" 2>&1 &
primary_pid=$!
for i in $(seq $((LOAD_TIMEOUT * 5))); do
	last_zone_served $primary_port "$out" && break
	[ "$i" = $((LOAD_TIMEOUT * 5)) ] && { echo "the primary did not load in ${LOAD_TIMEOUT}s" >&2; exit 1; }
	sleep 0.2
done

# sum METRIC LABEL=VALUE: the sum of a family's series with that label.
sum() {
	curl -s "http://127.0.0.1:$((port + 1))/metrics" | awk -v f="$1" -v l="$2" \
		'index($0, f "{") == 1 && index($0, l) { s += $NF } END { printf "%d\n", s }'
}
printf ".:$port {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:$((port + 1))\n    codel\n    fastpack\n    zonestore {\n        catalog catalog.invalid 127.0.0.1:$primary_port\n    }\n}\n" > "$out/Corefile"

# rcvbuf_drops: /proc/net/snmp's Udp RcvbufErrors, the machine's count.
rcvbuf_drops() { awk '/^Udp:/ { if (h) { print $6; exit } h = 1 }' /proc/net/snmp; }
echo "build	notify	current	soa_queries	seconds	transfers	codel_drops	rcvbuf_drops"
for r in $(seq "$ROUNDS"); do
	order=$builds
	[ $((r % 2)) = 0 ] && [ "$builds" = "old new" ] && order="new old"
	for b in $order; do
		GOMAXPROCS=1 taskset -c 0 "$out/coredns-$b" -conf "$out/Corefile" -quiet > "$out/$b.log" 2>&1 &
		pid=$!
		for i in $(seq $((LOAD_TIMEOUT * 5))); do
			sample_served $port "$out" && break
			[ "$i" = $((LOAD_TIMEOUT * 5)) ] && { echo "$b did not load in ${LOAD_TIMEOUT}s" >&2; exit 1; }
			sleep 0.2
		done
		# Knot notifies each zone as it loads it, one NOTIFY at a time over
		# TCP, and goes on after ontime serves the sample: at 100,000 zones
		# for about 45 s after it started. The window opens once 3 s pass
		# without one (the requests of type SOA ontime is asked are the
		# NOTIFYs), so that none of those is counted in it. Until
		# 2026-12-07 21:30 it opened 2 s after the sample answered, and the
		# last of them were counted as sent again (bench/README.md).
		last=-1 quiet=0
		for _ in $(seq $((SETTLE_TIMEOUT * 5))); do
			s=$(sum coredns_dns_requests_total 'type="SOA"')
			if [ "$s" = "$last" ]; then quiet=$((quiet + 1)); else last=$s quiet=0; fi
			[ "$quiet" -ge 15 ] && break
			sleep 0.2
		done
		n0=$(sum coredns_zonestore_notifies_total 'result="') soa0=$(sum coredns_zonestore_transfers_total 'type="current"')
		c0=$(sum coredns_zonestore_notifies_total 'result="current"')
		x0=$(sum coredns_zonestore_transfers_total 'result="published"') d0=$(sum coredns_codel_drops_total 'reason="')
		t0=$(now) k0=$(rcvbuf_drops)
		if [ -n "${CHANGE:-}" ]; then # a new serial for every zone: Knot notifies each as it loads it
			serial=$(($(awk '/^@ SOA/ { print $5; exit }' "$out/zones/db.z0.test") + 1)) # one more than the files hold now
			find "$out/zones" -name 'db.*' -print0 | xargs -0 sed -i "s/^@ SOA ns1 hostmaster [0-9]* /@ SOA ns1 hostmaster $serial /"
			knotc -c "$out/primary.conf" zone-reload > /dev/null
		else
			knotc -c "$out/primary.conf" zone-notify > /dev/null
		fi
		tlast=$t0 soa=$soa0 n=$n0 xl=$x0 still=0 want=$((ZONES + 1))
		[ -n "${CHANGE:-}" ] && want=$ZONES
		for _ in $(seq $((SETTLE_TIMEOUT * 5))); do
			sleep 0.2
			s=$(sum coredns_zonestore_transfers_total 'type="current"') m=$(sum coredns_zonestore_notifies_total 'result="')
			x=$(sum coredns_zonestore_transfers_total 'result="published"')
			if [ "$s" != "$soa" ] || [ "$m" != "$n" ] || [ "$x" != "$xl" ]; then tlast=$(now) soa=$s n=$m xl=$x still=0; else still=$((still + 1)); fi
			# every NOTIFY counted (the catalog's too, unless CHANGE left it
			# as it was), then 2 s without a change
			[ $((n - n0)) -ge "$want" ] && [ "$still" -ge 10 ] && break
		done
		c=$(sum coredns_zonestore_notifies_total 'result="current"')
		printf '%s\t%d\t%d\t%d\t%.2f\t%d\t%d\t%d\n' "$b" $((n - n0)) $((c - c0)) $((soa - soa0)) "$(echo "$tlast - $t0" | bc)" \
			$((xl - x0)) $(($(sum coredns_codel_drops_total 'reason="') - d0)) $(($(rcvbuf_drops) - k0))
		curl -s "http://127.0.0.1:$((port + 1))/metrics" > "$out/metrics.$b.$r.txt" # codel's sojourn and the rest, for a look after
		kill "$pid"; wait "$pid" 2>/dev/null || true; pid=
	done
done
