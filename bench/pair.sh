#!/usr/bin/env bash
# A change's CPU time a query at a light, even load, the two builds side by
# side: ontime's full chain built from BASE and from the working tree, both
# on CPU 0 (GOMAXPROCS=1) at the same time, each offered RATE queries a
# second by its own bench/loadgen on CPU 1, each one's CPU time read over the
# same window. This machine is shared and noisy: runs of one server after
# the other saw rounds from 0.61 to 1.39 at 2,000 q/s, where the same two
# builds side by side agreed within 0.93 to 0.98, the noise falling on both
# at once. Each server takes a few per cent of the core at these rates, so
# the two hardly compete for it; which one starts first alternates. Two
# identical builds (BASE=HEAD, nothing changed) read 0.976 to 1.038 in
# five rounds of 8 s: a difference inside that is none. At 20,000 q/s
# they read 0.972 to 0.992 (the working tree's build a little lower in
# every round).
#
#   BASE=HEAD~1 bash bench/pair.sh                              # 2,000 q/s, 5 rounds of 12 s
#   BASE=HEAD~1 RATE=20000 SECONDS_PER_RUN=8 bash bench/pair.sh
#
# RATE=max saturates both instead: each loadgen keeps 200 queries
# outstanding (its closed loop, as load.sh's), the two servers take turns
# on CPU 0 as the kernel shares it, and a round's figure is the answers
# each gave a second of its CPU, new over old. Runs of one server after
# the other (load.sh's BASE) read 0.75 to 1.24 in the rounds of one A/B
# on 2026-12-06, where two identical builds side by side read 0.989 to
# 1.002 in six rounds: a change of half a per cent shows here. Both
# servers share CPU 0's caches, each evicting the other's lines between
# turns: a change that shrinks what a query touches may read less here
# than it gives alone.
#
#   BASE=HEAD RATE=max SECONDS_PER_RUN=6 ROUNDS=8 bash bench/pair.sh
#
# ZONE, QUERIES and BLOCK (the zonestore block's options, as
# ' {\n        replay 0\n    }') set the zone file, the query file and the
# options for both: the flood of load.sh's FLOOD=100, say, with
# QUERIES=bench/out/queries-flood.txt (load.sh writes it).
#
# PEER=knot (or nsd) puts that server, pinned to CPU 0 with one UDP worker
# (one server process), in the old build's place, and BASE is not needed:
# ontime against its peer on the same core at the same time, where runs of
# one server after the other (load.sh) read the unsigned flood 0.80x to
# 0.91x Knot within one hour (bench/README.md, 2026-12-06 23:17).
#
#   PEER=knot RATE=max SECONDS_PER_RUN=6 ROUNDS=8 bash bench/pair.sh
#   PEER=knot RATE=max QUERIES=bench/out/queries-flood.txt bash bench/pair.sh
#
# Prints each round's CPU milliseconds and the ratio new/old, and their
# median. CPU time is read from /proc/PID/task/*/schedstat (nanoseconds on
# a CPU, every thread of the server). Saturated, it also prints each
# server's user and system time an answer over all rounds (lib.sh's
# cpu_ticks, clock ticks of /proc/PID/stat), to split a gap between the
# two. Bounded: ROUNDS runs of SECONDS_PER_RUN; both servers and both
# loadgens are stopped at exit.
# Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh

PEER=${PEER:-}
case "$PEER" in
"" | knot | nsd) ;;
*) echo "PEER is knot or nsd"; exit 1 ;;
esac
[ -n "$PEER" ] || BASE=${BASE:?BASE names the commit to compare the working tree with}
RATE=${RATE:-2000}
ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER_RUN:-12}
ZONE=${ZONE:-bench/out/db.bench}
QUERIES=${QUERIES:-bench/out/queries.txt}
BLOCK=${BLOCK:-}
[ "$SECS" -ge 4 ] || { echo "SECONDS_PER_RUN is 4 at least"; exit 1; }
out=bench/out/pair
mkdir -p "$out"

go build -o "$out/coredns-new" ./cmd/coredns
if [ -z "$PEER" ]; then
	rm -rf "$out/base-src"
	git worktree add -f --detach "$out/base-src" "$BASE" >/dev/null
	(cd "$out/base-src" && go build -o ../coredns-old ./cmd/coredns)
	git worktree remove -f "$out/base-src"
fi
go build -o bench/out/bin/loadgen ./bench/loadgen
[ -s bench/out/db.bench ] && [ -s bench/out/queries.txt ] ||
	go run ./bench/genzone -hosts 50000 -zone bench/out/db.bench -queries bench/out/queries.txt

pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

# cpu_ns PID: the time every thread of PID and of its descendants (NSD
# serves from a child) has run, in nanoseconds.
cpu_ns() {
	local p ns
	ns=$(cat /proc/"$1"/task/*/schedstat 2>/dev/null | awk '{ns += $1} END {printf "%.0f\n", ns}')
	for p in $(pgrep -P "$1"); do ns=$((ns + $(cpu_ns "$p"))); done
	echo "$ns"
}

port() { [ "$1" = old ] && echo 15761 || echo 15771; }
for v in old new; do
	p=$(port $v)
	printf ".:$p {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:$((p + 2))\n    codel\n    fastpack\n    zonestore $PWD/$ZONE bench.example$BLOCK\n}\n" > "$out/Corefile.$v"
done

load=(-rate "$RATE")
[ "$RATE" = max ] && load=(-inflight 200 -batch 32 -sockets 4 -max 1000000000)
against=${PEER:-BASE=$BASE}
echo "$RATE queries/s to each for ${SECS}s, $ROUNDS rounds; $against (old) against the working tree (new)"
rounds=$out/rounds.txt
: > "$rounds"
for i in $(seq "$ROUNDS"); do
	declare -A srv=() lg=()
	order="old new"
	[ $((i % 2)) = 0 ] && order="new old" # which starts first, alternated
	for v in $order; do
		if [ "$v" = old ] && [ -n "$PEER" ]; then
			rm -rf "$out/$PEER" && mkdir -p "$out/$PEER"
			case $PEER in
			knot)
				knot_conf "$out/$PEER" "$(port old)" "$ZONE" 1
				taskset -c 0 knotd -c "$out/$PEER/knot.conf" > "$out/old.log" 2>&1 &
				;;
			nsd)
				nsd_conf "$out/$PEER" "$(port old)" "$ZONE" 1
				taskset -c 0 nsd -d -c "$out/$PEER/nsd.conf" > "$out/old.log" 2>&1 & # -d: $! is the server
				;;
			esac
		else
			GOMAXPROCS=1 taskset -c 0 "$out/coredns-$v" -conf "$out/Corefile.$v" -quiet > "$out/$v.log" 2>&1 &
		fi
		srv[$v]=$!
		pids+=("$!")
	done
	for v in old new; do answering "$(port $v)" bench.example 600 || { echo "$v did not start"; cat "$out/$v.log"; exit 1; }; done
	if [ "$RATE" = max ]; then # the CPU of the whole run, against the answers of the whole run
		sleep 1
		o0=$(cpu_ns "${srv[old]}") n0=$(cpu_ns "${srv[new]}")
		read -r ou0 os0 < <(cpu_ticks "${srv[old]}")
		read -r nu0 ns0 < <(cpu_ticks "${srv[new]}")
	fi
	for v in $order; do
		taskset -c 1 bench/out/bin/loadgen -server "127.0.0.1:$(port $v)" -queries "$QUERIES" \
			"${load[@]}" -duration "${SECS}s" -json > "$out/$v.json" &
		lg[$v]=$!
		pids+=("$!")
	done
	if [ "$RATE" != max ]; then
		sleep 1
		o0=$(cpu_ns "${srv[old]}") n0=$(cpu_ns "${srv[new]}")
		sleep $((SECS - 2))
		o1=$(cpu_ns "${srv[old]}") n1=$(cpu_ns "${srv[new]}")
	fi
	wait "${lg[old]}" "${lg[new]}"
	if [ "$RATE" = max ]; then
		o1=$(cpu_ns "${srv[old]}") n1=$(cpu_ns "${srv[new]}")
		read -r ou1 os1 < <(cpu_ticks "${srv[old]}")
		read -r nu1 ns1 < <(cpu_ticks "${srv[new]}")
	fi
	kill "${srv[old]}" "${srv[new]}"
	wait "${srv[old]}" "${srv[new]}" 2>/dev/null || true
	old_ms=$(((o1 - o0) / 1000000)) new_ms=$(((n1 - n0) / 1000000))
	if [ "$RATE" = max ]; then
		old_n=$(field answered < "$out/old.json") new_n=$(field answered < "$out/new.json")
		echo "$i $old_ms $new_ms $old_n $new_n $((ou1 - ou0)) $((os1 - os0)) $((nu1 - nu0)) $((ns1 - ns0))" >> "$rounds"
		awk -v i="$i" -v o="$old_ms" -v n="$new_ms" -v on="$old_n" -v nn="$new_n" 'BEGIN {
			printf "round %d: old %d answers in %d ms of CPU, new %d in %d ms, answers a CPU-second new/old %.4f\n", i, on, o, nn, n, (nn / n) / (on / o) }'
	else
		echo "$i $old_ms $new_ms" >> "$rounds"
		awk -v i="$i" -v o="$old_ms" -v n="$new_ms" 'BEGIN { printf "round %d: old %d ms, new %d ms, new/old %.3f\n", i, o, n, n / o }'
	fi
done
what="CPU a query, new/old"
[ "$RATE" = max ] && what="answers a CPU-second, new/old"
awk -v max="$RATE" '{ print max == "max" ? ($5 / $3) / ($4 / $2) : $3 / $2 }' "$rounds" | sort -n | awk -v what="$what" '
	{ r[NR] = $1 }
	END {
		m = NR % 2 ? r[(NR + 1) / 2] : (r[NR / 2] + r[NR / 2 + 1]) / 2
		printf "%s: median %.4f (rounds %.4f to %.4f)\n", what, m, r[1], r[NR]
	}'
if [ "$RATE" = max ]; then # user and system time an answer, each server, from the rounds' ticks
	awk -v hz="$(getconf CLK_TCK)" '{ ou += $6; os += $7; nu += $8; ns += $9; on += $4; nn += $5 }
		END { us = 1e6 / hz
			printf "time an answer, all rounds: old user %.2f µs, system %.2f; new user %.2f µs, system %.2f\n",
				ou * us / on, os * us / on, nu * us / nn, ns * us / nn }' "$rounds"
fi
