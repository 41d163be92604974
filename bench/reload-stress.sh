#!/usr/bin/env bash
# Corefile reloads under load: a server of one small zone, bound to
# every address (BIND= , the default here) or to one (BIND=127.0.0.1),
# reloaded by SIGUSR1 CYCLES times between a Corefile with codel
# (sockets 3) and one without, GAP seconds apart, while bench/loadgen
# offers RATE queries a second; then loadgen's sent and unanswered, and
# codel's drops (counted, on purpose), and the kernel's UDP drops
# (nstat: a full socket buffer, a datagram for no socket). A query
# neither answered nor dropped was lost by a reload. HOGS=N runs N busy
# loops beside it, as a loaded CI machine does. OTHER=codel makes the
# second Corefile one with codel too (sockets 2), so that each reload
# hands codel's sockets from one instance to the next.
#
#   bash bench/reload-stress.sh
#   HOGS=2 RUNS=6 bash bench/reload-stress.sh
#   OTHER=codel RUNS=4 bash bench/reload-stress.sh
#
# Bounded: each run lasts 2 * CYCLES * GAP + 6 s; the server and the
# hogs are killed on exit. Traffic stays on 127.0.0.1.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
CYCLES=${CYCLES:-20} GAP=${GAP:-0.6} RATE=${RATE:-4000} RUNS=${RUNS:-3} HOGS=${HOGS:-0}
BIND=${BIND-} OTHER=${OTHER:-plain}
port=15831
dir=$(mktemp -d)
pids=()
cleanup() {
	for p in "${pids[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null || true; done
	sleep 0.5
	for p in "${pids[@]:-}"; do [ -n "$p" ] && kill -9 "$p" 2>/dev/null || true; done
	rm -rf "$dir"
}
trap cleanup EXIT
# kernel_drops prints the kernel's UDP drops (the whole machine's) since
# kernel_drops start: a full socket buffer, a datagram for no socket. A
# query lost so is counted there, not by codel.
kernel_drops() {
	command -v nstat > /dev/null || return 0
	if [ "${1-}" = start ]; then nstat -n; return; fi
	nstat -z UdpNoPorts Udp6NoPorts UdpRcvbufErrors Udp6RcvbufErrors UdpInErrors Udp6InErrors |
		awk 'NR > 1 && $2 > 0 { printf "  kernel: %s %s\n", $1, $2 }'
}
go build -o coredns ./cmd/coredns
go build -o "$dir/loadgen" ./bench/loadgen
printf '$ORIGIN example.org.\n@ 3600 IN SOA ns. host. 1 7200 3600 1209600 3600\n@ 3600 IN NS ns.\nwww 3600 IN A 192.0.2.1\n' > "$dir/db"
echo "www.example.org A" > "$dir/queries"
bind=
[ -n "$BIND" ] && bind="    bind $BIND\n"
with=".:$port {\n$bind    prometheus 127.0.0.1:$((port + 1))\n    codel {\n        sockets 3\n    }\n    zonestore $dir/db example.org\n}\n"
without=".:$port {\n$bind    prometheus 127.0.0.1:$((port + 1))\n    zonestore $dir/db example.org\n}\n"
other="without codel"
if [ "$OTHER" = codel ]; then
	without=".:$port {\n$bind    prometheus 127.0.0.1:$((port + 1))\n    codel {\n        sockets 2\n    }\n    zonestore $dir/db example.org\n}\n"
	other="with codel (sockets 2)"
fi
secs=$(echo "2 * $CYCLES * $GAP + 4" | bc -l | cut -d. -f1)
echo "bound to ${BIND:-every address}; $CYCLES reloads to a Corefile $other and back, ${GAP}s apart, at $RATE q/s; $HOGS busy loops beside"
for run in $(seq "$RUNS"); do
	for _ in $(seq "$HOGS"); do
		timeout $((secs + 10)) sh -c 'while :; do :; done' &
		pids+=($!)
	done
	printf "$with" > "$dir/Corefile"
	./coredns -conf "$dir/Corefile" > "$dir/log" 2>&1 &
	server=$!
	pids+=("$server")
	answering "$port" example.org || { cat "$dir/log"; exit 1; }
	"$dir/loadgen" -server "127.0.0.1:$port" -queries "$dir/queries" -rate "$RATE" -duration "${secs}s" -json > "$dir/load" 2>&1 &
	load=$!
	sleep 1
	kernel_drops start
	for _ in $(seq "$CYCLES"); do
		for corefile in "$without" "$with"; do
			printf "$corefile" > "$dir/Corefile"
			kill -USR1 "$server"
			sleep "$GAP"
		done
	done
	wait "$load" || true
	kernel_drops
	curl -s -m 5 "http://127.0.0.1:$((port + 1))/metrics" > "$dir/metrics" || true
	drops=$(awk '/^coredns_codel_drops_total/ { n += $2 } END { print n + 0 }' "$dir/metrics")
	reasons=$(awk '/^coredns_codel_drops_total/ && $2 > 0 { match($0, /reason="[a-z]+"/); printf " %s %s", substr($0, RSTART + 8, RLENGTH - 9), $2 }' "$dir/metrics")
	reloads=$(grep -c "Reloading complete" "$dir/log" || true)
	echo "run $run: sent $(field sent < "$dir/load"), unanswered $(field unanswered < "$dir/load"), dropped by codel $drops${reasons:+ (${reasons# })}, reloads completed $reloads of $((2 * CYCLES))"
	kill "$server"
	for _ in $(seq 50); do kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
	if kill -0 "$server" 2>/dev/null; then
		echo "run $run: the server did not stop on SIGTERM in 5 s"
		kill -9 "$server"
	fi
	wait "$server" 2>/dev/null || true
	for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
	pids=()
done
