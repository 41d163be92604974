#!/usr/bin/env bash
# The peer table (make bench): ontime's full chain (prometheus, codel,
# fastpack, zonestore) against stock CoreDNS's file plugin (built from the
# same module versions), Knot DNS and NSD (Debian's packages), on the same
# generated zone and query mix, in one run, rounds interleaved. Beside them:
# lookup, the full chain with zonestore's `replay 0` (every query looked up
# and packed, no answer kept: the same work as Knot's for every query, and
# what the chain costs a question the server has not answered before);
# zonestore alone, stock CoreDNS with whoami (a plugin that looks nothing
# up: the ceiling for any plugin on CoreDNS's own server) and floor (a bare
# Go loop that echoes each query back as its answer, recvmmsg/sendmmsg: the
# ceiling for any Go server on these sockets). On request: codel-file and
# codel-zonestore, ontime's binary with codel's server path in front of
# stock file or of zonestore, the two lookups compared on the same loop;
# codel-fastpack, codel-zonestore with fastpack, the encoder on that loop;
# split, ontime's full chain as a process a core (GOMAXPROCS=1 each, on a
# CPU of its own, all on one port): at more cores than one, servers that
# share nothing, which one process's shared queue is measured against.
#
# Each server runs on CPU 0 (GOMAXPROCS=1, one worker thread for Knot and
# NSD) and the load tool on CPU 1 (LOADER, below): queries per second at
# saturation. Then
# bench/loadgen offers every server the same fixed rate (LAT_RATE, below
# all of their capacities) for the latency percentiles, so that they are
# compared on the same load rather than on how deep the load fills each one's
# queue, and for the CPU time each spends an answered query on that load
# (µs/q@rate; LAT_RATE=80000 for a load near ontime's capacity). With
# CORES=N, CPUs 0 to N-1 go to the server (GOMAXPROCS=N, N workers for
# Knot and NSD) and the load tool runs on the CPUs left, a thread
# each (4 sockets and 200 queries outstanding a thread); with every CPU
# given to the server the load tools share them, unpinned, with a
# thread for every four CPUs. CORES="1 2 4 8" runs each, interleaved, each
# server's rows named NAME@N, with its queries per second against its own
# at one core (the scaling series, on a machine with the cores for it).
#
#   bash bench/load.sh            # 3 rounds of 10 s per server
#   ROUNDS=1 SECONDS_PER_RUN=5 bash bench/load.sh
#   SERVERS="full knot" CORES="1 2" bash bench/load.sh
#   SERVERS="full knot" CORES="1 2 4 8 16" ROUNDS=2 bash bench/load.sh   # the scaling series
#   BASE=HEAD~1 SERVERS="base full" bash bench/load.sh   # a change, before and after
#   NAMES=20 SERVERS="full knot" bash bench/load.sh        # 20 names asked over and over
#   FLOOD=50 SERVERS="full lookup knot" bash bench/load.sh # half the queries names that do not exist, each new
#   LOADER=dnsperf DNSPERF_ARGS="-m tcp" SERVERS="full lookup knot" bash bench/load.sh # over TCP (the latency columns stay UDP's)
#   SIGNED=nsec3 FLOOD=100 SERVERS="full lookup knot" bash bench/load.sh # the zone signed, DO on every query, a flood of new names
#
# BASE names a commit: "base" is then the full chain built from it, so that
# a change is measured against what came before it in the same run; PATCH
# (a file, as bench/experiments/) is applied to it first: a scratch build
# measured against the tree (BASE=HEAD PATCH=...).
# DIAG=N: for ontime's full chain (and base) at N cores, a CPU profile
# (3 s) and an execution trace (0.3 s) taken while the load runs, into
# bench/out/diag/ (pprof on port+2: where its cores idle, and why); for
# every server at N cores, first, 1.5 s of bench/sched-sample.py: its
# CPUs' time by kind and its threads' states as the kernel sees them.
# DIAG_PROFILE=0 leaves out the profile and the trace. PROCS=P runs
# ontime with GOMAXPROCS=P instead of its cores, and
# CODEL_OPTS=workers=1,sockets=2 gives its codel those options.
# RRL_RATE=N puts rrl, at N responses a second a network, after codel in
# ontime's full chain (and base, and split): its cost, and replay's
# through it. Both apply to each of split's processes.
# BIND=ADDR binds ontime's servers to ADDR (default 127.0.0.1); BIND= binds
# them to nothing, every address of both families, as a Corefile without
# bind (the load still goes to 127.0.0.1).
# LOADGEN_ARGS adds flags to every bench/loadgen run (saturation and
# latency): "-cookie" puts a client cookie on every query, as BIND sends
# them; "-bufsize 1232" an OPT record on every one.
# OUTSTANDING=N: the load keeps N queries outstanding a thread (default
# 200). What a server drops
# dnsperf waits 5 s for (loadgen 1 s), so a window more than a server holds
# shrinks, by its own drops, for that long: codel sheds what waits past
# twice its target, Knot and NSD what overflows a socket's buffer (on the
# 16-CPU machine, of 3,000 outstanding at one core, codel dropped 2,972
# and Knot lost 2,803). A smaller window, which neither drops, compares
# them on the same one.
# LOADER: what saturates. loadgen (the default since 2026-12-04 21:30):
# bench/loadgen's batched closed loop (-inflight OUTSTANDING a thread,
# sendmmsg and recvmmsg of 32); dnsperf: dnsperf, as before. On the 2-CPU
# machine dnsperf needed all of its CPU, about 8 µs a query, to keep one
# server core busy, so that the one-core figure was dnsperf's rate, not the
# server's; loadgen needs about half that, and the server is then the
# limit. Queries lost are those loadgen gave up on (unanswered after 1 s).
# Every run of those builds leaves codel's and the chain's counters
# (metrics, scraped after the load) there too.
# BUILT=1 builds nothing: ./coredns, bench/out/coredns-stock, bench/out/bin,
# bench/out/db.bench and bench/out/queries.txt are used as they are (made on
# another machine, for one without Go: bench/device-scaling.sh).
#
# Prints the table and writes it to bench/out/results.tsv (every run) and
# bench/out/table.txt; with gnuplot, the plot bench/out/load.png.
#
# Bounded: every run stops after SECONDS_PER_RUN, and every server it starts
# is killed on exit. Traffic goes to 127.0.0.1 only.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${ROUNDS:-3}
SECS=${SECONDS_PER_RUN:-10}
LOADER=${LOADER:-loadgen}
case $LOADER in dnsperf | loadgen) ;; *) echo "LOADER is dnsperf or loadgen"; exit 1 ;; esac
HOSTS=${HOSTS:-50000}
SERVERS=${SERVERS:-"full lookup zonestore file whoami knot nsd floor"}
CORES=${CORES:-1}
PLOT_ONLY=${PLOT_ONLY:-} # set: plot and tabulate bench/out/results.tsv again, run nothing
LAT_RATE=${LAT_RATE:-20000}
LAT_SECS=${LAT_SECS:-3}
BIND=${BIND-127.0.0.1}
NAMES=${NAMES:-} # set: only the mix's first NAMES queries, repeated (a working set the caches hold)
FLOOD=${FLOOD:-} # set: FLOOD in 100 queries a name never asked before, a random label under the apex (a random-subdomain flood)
# SIGNED=nsec or nsec3: every server serves the zone signed by BIND's
# dnssec-signzone (ECDSA P-256, a KSK and a ZSK; NSEC3 with no salt and no
# extra iteration, as RFC 9276 advises), and every query asks with DO.
# The signed zone is kept in bench/out and signed again when the zone changes.
SIGNED=${SIGNED:-}
case $SIGNED in "" | nsec | nsec3) ;; *) echo "SIGNED is nsec or nsec3"; exit 1 ;; esac
cpus=$(nproc)
hz=$(getconf CLK_TCK) # the clock ticks of /proc/PID/stat, a second
cores() { # N: sets ncores, srv_cpus, load_pin and load_threads for N cores given to the server
	ncores=$1
	if ! [ "$1" -ge 1 ] 2>/dev/null || [ "$1" -gt "$cpus" ]; then echo "CORES holds numbers from 1 to $cpus"; exit 1; fi
	srv_cpus=0-$(($1 - 1))
	if [ "$1" -lt "$cpus" ]; then # the load tools on the CPUs left
		load_pin="taskset -c $1-$((cpus - 1))" load_threads=$((cpus - $1))
	else # every CPU to the server: the load tools share them
		load_pin= load_threads=$((cpus / 4 > 0 ? cpus / 4 : 1))
	fi
}
for c in $CORES; do cores "$c"; done
out=bench/out
mkdir -p "$out/diag"
# answering_metrics PORT: wait until a server's metrics answer on
# 127.0.0.1:PORT, 10 s at most; false if they never do.
answering_metrics() {
	for _ in $(seq 100); do
		rm -f "$out/diag/.probe"
		fetch "http://127.0.0.1:$1/metrics" "$out/diag/.probe"
		[ -s "$out/diag/.probe" ] && return 0
		sleep 0.1
	done
	return 1
}
# fetch URL FILE: what a server's HTTP endpoint answers (curl, or Python's
# standard library where curl is missing), best effort.
fetch() {
	if command -v curl >/dev/null; then
		curl -s -m 10 -o "$2" "$1" || true
	else
		python3 -c 'import sys, urllib.request; open(sys.argv[2], "wb").write(urllib.request.urlopen(sys.argv[1], timeout=10).read())' "$1" "$2" || true
	fi
}

for tool in dnsperf taskset dig; do command -v $tool >/dev/null || { echo "need $tool (make bench-deps installs it)"; exit 1; }; done
if [ -z "${BUILT:-}" ]; then
	go build -o coredns ./cmd/coredns
	go build -o "$out/coredns-stock" github.com/coredns/coredns
	if [ -n "${BASE:-}" ]; then
		rm -rf "$out/base-src"
		git worktree add -f --detach "$out/base-src" "$BASE" >/dev/null
		[ -z "${PATCH:-}" ] || git -C "$out/base-src" apply "$PWD/$PATCH"
		(cd "$out/base-src" && go build -o ../coredns-base ./cmd/coredns)
		git worktree remove -f "$out/base-src"
	fi
	go build -o "$out/bin/floor" ./bench/floor
	go build -o "$out/bin/loadgen" ./bench/loadgen
	go run ./bench/genzone -hosts "$HOSTS" -zone "$out/db.bench" -queries "$out/queries.txt"
fi
queries=$out/queries.txt
if [ -n "$NAMES" ]; then # the first NAMES queries of the mix, over and over
	queries=$out/queries-$NAMES.txt
	head -n "$NAMES" "$out/queries.txt" > "$queries.one"
	for _ in $(seq $((200000 / NAMES))); do cat "$queries.one"; done > "$queries"
fi
if [ -n "$FLOOD" ]; then # loadgen writes six hex digits of the query's number over _rand_
	[ "$LOADER" = loadgen ] || { echo "FLOOD needs LOADER=loadgen (dnsperf would ask _rand_ itself)"; exit 1; }
	awk -v p="$FLOOD" 'BEGIN { srand(1) } { if (rand() * 100 < p) print "_rand_.bench.example A"; else print }' "$queries" > "$out/queries-flood.txt"
	queries=$out/queries-flood.txt
fi
zone=$out/db.bench
if [ -n "$SIGNED" ]; then
	command -v dnssec-signzone >/dev/null || { echo "need dnssec-signzone (make bench-deps installs it)"; exit 1; }
	zone=$out/db.bench.$SIGNED
	sum=$(md5sum < "$out/db.bench")
	if [ ! -s "$zone" ] || [ "$(cat "$zone.sum" 2>/dev/null)" != "$sum" ]; then
		echo "signing $out/db.bench with $SIGNED (about 20 s)"
		rm -rf "$out/keys" && mkdir -p "$out/keys"
		dnssec-keygen -q -K "$out/keys" -a ECDSAP256SHA256 -f KSK -n ZONE bench.example >/dev/null
		dnssec-keygen -q -K "$out/keys" -a ECDSAP256SHA256 -n ZONE bench.example >/dev/null
		nsec3=()
		[ "$SIGNED" = nsec ] || nsec3=(-3 -)
		dnssec-signzone -q -K "$out/keys" -d "$out/keys" -S -o bench.example -e +2592000 -f "$zone" "${nsec3[@]}" "$out/db.bench" >/dev/null
		echo "$sum" > "$zone.sum"
	fi
	if [ "$LOADER" = loadgen ]; then
		awk '{ print $1, $2, "do" }' "$queries" > "$out/queries-do.txt"
		queries=$out/queries-do.txt
	else
		DNSPERF_ARGS="${DNSPERF_ARGS:-} -D"
	fi
fi

pids=()
cleanup() { for p in "${pids[@]:-}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

port=15353
codel_lines() { # the full chain's codel, with CODEL_OPTS, and rrl where RRL_RATE is set, as printf's format
	local codel=codel
	[ -n "${CODEL_OPTS:-}" ] && codel="codel {\\n        $(echo "$CODEL_OPTS" | sed 's/=/ /g; s/,/\\n        /g')\\n    }"
	[ -n "${RRL_RATE:-}" ] && codel="$codel\n    rrl {\n        rate $RRL_RATE\n    }"
	echo "$codel"
}
start_server() { # name -> starts it on $port, sets $pid
	local name=$1 dir="$out/$1" bind=
	mkdir -p "$dir"
	[ -n "$BIND" ] && bind="    bind $BIND\n"
	case $name in
	zonestore|fastpack|full|base|lookup|file|whoami|codel-file|codel-zonestore|codel-fastpack)
		local bin=./coredns plugins=$name block=
		case $name in
		file|whoami) bin="$out/coredns-stock" ;;
		fastpack) plugins="fastpack\n    zonestore" ;;
		codel-file) plugins="codel\n    file" ;;
		codel-zonestore) plugins="codel\n    zonestore" ;;
		codel-fastpack) plugins="codel\n    fastpack\n    zonestore" ;;
		full|base|lookup)
			plugins="prometheus 127.0.0.1:$((port + 1))\n    $(codel_lines)\n    fastpack\n    zonestore"
			[ "${DIAG:-}" = "$ncores" ] && plugins="pprof 127.0.0.1:$((port + 2))\n    $plugins"
			;;
		esac
		[ "$name" = lookup ] && block=" {\n        replay 0\n    }" # every query looked up and packed, none kept
		[ "$name" = base ] && bin="$out/coredns-base"
		if [ "$name" = whoami ]; then # the ceiling: answers without looking anything up
			printf ".:%d {\n${bind}    whoami\n}\n" "$port" > "$dir/Corefile"
		else
			printf ".:%d {\n${bind}    $plugins %s %s$block\n}\n" "$port" "$PWD/$zone" bench.example > "$dir/Corefile"
		fi
		GOMAXPROCS=${PROCS:-$ncores} taskset -c $srv_cpus "$bin" -conf "$dir/Corefile" -quiet > "$dir/log" 2>&1 &
		;;
	split)
		# The full chain as a process a core, each at GOMAXPROCS=1 pinned
		# to a CPU of its own, all on one port: the kernel spreads the
		# load's sockets over theirs (SO_REUSEPORT). Servers that share
		# nothing, as Knot's workers share nothing: what one process's
		# shared queue is measured against as cores are added. The kernel
		# hashes each of the load's sockets to one process: with few of
		# them (4, where the load shares the server's CPUs) one process may
		# get most or all (each one's reads are in diag/). $pid is the
		# shell that holds them (cpu_ticks counts its children; killed, it
		# kills them); process i's metrics are on port+10+i.
		local i
		for i in $(seq 0 $((ncores - 1))); do
			printf ".:%d {\n${bind}    prometheus 127.0.0.1:%d\n    $(codel_lines)\n    fastpack\n    zonestore %s %s\n}\n" \
				"$port" $((port + 10 + i)) "$PWD/$zone" bench.example > "$dir/Corefile.$i"
		done
		(
			trap 'kill $(jobs -p) 2>/dev/null' TERM
			for i in $(seq 0 $((ncores - 1))); do
				GOMAXPROCS=1 taskset -c "$i" ./coredns -conf "$dir/Corefile.$i" -quiet > "$dir/log.$i" 2>&1 &
			done
			wait
		) &
		;;
	floor)
		GOMAXPROCS=1 taskset -c 0 "$out/bin/floor" -addr "127.0.0.1:$port" -batch 32 > "$dir/log" 2>&1 &
		;;
	knot)
		knot_conf "$dir" "$port" "$zone" "$ncores"
		taskset -c $srv_cpus knotd -c "$dir/knot.conf" > "$dir/log" 2>&1 &
		;;
	nsd)
		nsd_conf "$dir" "$port" "$zone" "$ncores"
		# -d: stay in the foreground, so that $! is the server to kill.
		taskset -c $srv_cpus nsd -d -c "$dir/nsd.conf" > "$dir/log" 2>&1 &
		;;
	esac
	pid=$!
	pids+=("$pid")
	if [ "$name" = floor ]; then sleep 0.3; return 0; fi # it answers anything, with no records
	if [ "$name" = split ]; then # every process up, not only the first to answer
		for i in $(seq 0 $((ncores - 1))); do
			answering_metrics $((port + 10 + i)) || { echo "split: process $i did not start:"; cat "$dir/log.$i"; exit 1; }
		done
	fi
	answering "$port" bench.example && return 0
	echo "$name did not start:"; cat "$dir/log"; exit 1
}

results="$out/results.tsv"
[ -n "$PLOT_ONLY" ] || : > "$results"
for round in $(seq "$ROUNDS"); do
	[ -n "$PLOT_ONLY" ] && break
	for c in $CORES; do
		cores "$c"
		for s in $SERVERS; do
			row=$s
			[ "$CORES" != "$c" ] && row=$s@$c
			start_server "$s"
			read -r u0 s0 < <(cpu_ticks "$pid")
			if [ "$LOADER" = loadgen ]; then
				$load_pin "$out/bin/loadgen" -server "127.0.0.1:$port" -queries "$queries" -duration "${SECS}s" -max 1000000000 \
					-inflight $((${OUTSTANDING:-200} * load_threads)) -batch 32 -sockets $((4 * load_threads)) ${LOADGEN_ARGS:-} -json > "$out/$s.batch" 2>&1 &
			else
				$load_pin dnsperf -s 127.0.0.1 -p "$port" -d "$queries" -l "$SECS" -T "$load_threads" -c $((4 * load_threads)) -q $((${OUTSTANDING:-200} * load_threads)) -S 0 ${DNSPERF_ARGS:-} > "$out/$s.dnsperf" 2>&1 &
			fi
			load=$!
			if [ "${DIAG:-}" = "$ncores" ] && [ "$s" != split ]; then # (split's $pid is a shell)
				sleep 0.5
				$load_pin python3 bench/sched-sample.py "$pid" 1.5 "$srv_cpus" > "$out/diag/$s@$c.r$round.sched" 2>&1 || true
			fi
			if [ "${DIAG:-}" = "$ncores" ] && [ "${DIAG_PROFILE:-1}" = 1 ] && { [ "$s" = full ] || [ "$s" = base ] || [ "$s" = lookup ]; }; then
				fetch "http://127.0.0.1:$((port + 2))/debug/pprof/profile?seconds=3" "$out/diag/$s@$c.r$round.cpu.pprof"
				fetch "http://127.0.0.1:$((port + 2))/debug/pprof/trace?seconds=0.3" "$out/diag/$s@$c.r$round.trace"
			fi
			wait "$load" || true
			case $s in
			full|base|lookup) fetch "http://127.0.0.1:$((port + 1))/metrics" "$out/diag/$s@$c.r$round.metrics" ;;
			split) for i in $(seq 0 $((ncores - 1))); do fetch "http://127.0.0.1:$((port + 10 + i))/metrics" "$out/diag/$s@$c.r$round.$i.metrics"; done ;;
			esac
			read -r u1 s1 < <(cpu_ticks "$pid")
			cpu=$(echo "($u1 + $s1 - $u0 - $s0) / $hz" | bc -l)
			if [ "$LOADER" = loadgen ]; then
				qps=$(field answered_qps < "$out/$s.batch")
				lost=$(field unanswered < "$out/$s.batch")
				done_q=$(field answered < "$out/$s.batch")
			else
				qps=$(awk '/Queries per second/ {print $4}' "$out/$s.dnsperf")
				lost=$(awk '/Queries lost/ {print $3}' "$out/$s.dnsperf")
				done_q=$(awk '/Queries completed/ {print $3}' "$out/$s.dnsperf")
			fi
			# The server's CPU use while the load ran, and the queries it
			# answered per second of it: the rate one core would reach with a
			# load tool that always kept up (on this shared machine dnsperf,
			# on the other core, did not), net of time the hypervisor took.
			cpu_pct=$(echo "100 * $cpu / $SECS" | bc -l)
			per_cpu=$(echo "if ($cpu > 0) ${done_q:-0} / $cpu else 0" | bc -l)
			# The same split: microseconds of user and of system (kernel) time
			# a query. The kernel's share is the sockets' and much the same
			# for every server; the user share is the server's own code.
			user_us=$(echo "if (${done_q:-0} > 0) ($u1 - $u0) * 1000000 / $hz / $done_q else 0" | bc -l)
			sys_us=$(echo "if (${done_q:-0} > 0) ($s1 - $s0) * 1000000 / $hz / $done_q else 0" | bc -l)
			# At the fixed rate, every server is offered the same arrivals,
			# evenly spaced rather than paced by its own answers as the saturating load's
			# are: its CPU time an answered query (user and kernel) is what
			# serving that load costs it.
			read -r u0 s0 < <(cpu_ticks "$pid")
			$load_pin "$out/bin/loadgen" -server "127.0.0.1:$port" -queries "$queries" -rate "$LAT_RATE" \
				-duration "${LAT_SECS}s" -warmup 500ms ${LOADGEN_ARGS:-} -json > "$out/$s.loadgen" 2>/dev/null || true
			read -r u1 s1 < <(cpu_ticks "$pid")
			p50=$(field p50_ms < "$out/$s.loadgen") p99=$(field p99_ms < "$out/$s.loadgen") p999=$(field p999_ms < "$out/$s.loadgen")
			answered=$(field answered < "$out/$s.loadgen")
			rate_us=$(echo "if (${answered:-0} > 0) ($u1 + $s1 - $u0 - $s0) * 1000000 / $hz / $answered else 0" | bc -l)
			printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%.0f\t%.0f\t%.2f\t%.2f\t%.2f\n' "$round" "$row" "${qps:-0}" "${p50:-0}" "${p99:-0}" "${p999:-0}" "${lost:-?}" "$cpu_pct" "$per_cpu" "$user_us" "$sys_us" "$rate_us" >> "$results"
			kill "$pid"; wait "$pid" 2>/dev/null || true
		done
	done
done

{
echo "$HOSTS-host zone$([ -n "$SIGNED" ] && echo " signed with $SIGNED, DO on every query")$([ -n "$FLOOD" ] && echo ", $FLOOD in 100 queries new names")$([ -n "$NAMES" ] && echo ", the mix's first $NAMES queries over and over"), ${SECS}s per run, $ROUNDS rounds interleaved, $CORES core(s) for the server (of $cpus)$([ "$CORES" = 1 ] && [ "$cpus" = 2 ] && echo ", $LOADER on the other")"
echo "full: ontime's chain (prometheus, codel, fastpack, zonestore); file, whoami: stock CoreDNS; floor: bench/floor -batch 32"
case " $SERVERS " in *" lookup "*) echo "lookup: the full chain with zonestore's replay 0 (every answer looked up and packed, none kept)" ;; esac
case " $SERVERS " in *" split "*) echo "split: ontime's chain as a process a core (GOMAXPROCS=1 each, on its own CPU), all on one port" ;; esac
echo "latency: bench/loadgen offering $LAT_RATE queries/s for ${LAT_SECS}s to each"
echo "cpu: the server's CPU use while $LOADER ran; q/cpu-s: queries answered per second of it; user, sys: its user and kernel time a query (µs)"
echo "µs/q@rate: the server's CPU time (user and kernel) an answered query while bench/loadgen offered $LAT_RATE queries/s"
awk -F'\t' '
	{ q[$2] += $3; a[$2] += $4; b[$2] += $5; c[$2] += $6; u[$2] += $8; e[$2] += $9; us[$2] += $10; sy[$2] += $11; fr[$2] += $12; n[$2]++; if (!($2 in order)) { order[$2] = ++k; names[k] = $2 } }
	END {
		knot = ("knot" in q) ? q["knot"] / n["knot"] : 0
		if (!knot && ("knot@1" in q)) knot = q["knot@1"] / n["knot@1"]
		printf "%-16s %10s %8s %9s %9s %9s %6s %10s %6s %6s %8s %10s\n", "server", "queries/s", "x Knot", "p50 ms", "p99 ms", "p99.9 ms", "cpu", "q/cpu-s", "user", "sys", "x 1 core", "µs/q@rate"
		for (i = 1; i <= k; i++) { s = names[i]; m = q[s] / n[s]
			one = s; sub(/@[0-9]+$/, "@1", one) # the same server on one core
			scale = (s ~ /@/ && (one in q)) ? sprintf("%8.2f", m / (q[one] / n[one])) : sprintf("%8s", "-")
			printf "%-16s %10.0f %8.2f %9.3f %9.3f %9.3f %5.0f%% %10.0f %6.2f %6.2f %s %10.2f\n", s, m, knot ? m / knot : 0, a[s] / n[s], b[s] / n[s], c[s] / n[s], u[s] / n[s], e[s] / n[s], us[s] / n[s], sy[s] / n[s], scale, fr[s] / n[s] }
	}' "$results"
} | tee "$out/table.txt"

if command -v gnuplot >/dev/null; then
	awk -F'\t' '{ q[$2] += $3; p[$2] += $5; n[$2]++; if (!($2 in o)) { o[$2] = ++k; nm[k] = $2 } }
		END { for (i = 1; i <= k; i++) printf "%s\t%.0f\t%.3f\n", nm[i], q[nm[i]] / n[nm[i]], p[nm[i]] / n[nm[i]] }' "$results" > "$out/plot.tsv"
	gnuplot <<EOG
set terminal png size 1000,420
set output '$out/load.png'
set datafile separator "\t"
set multiplot layout 1,2 title "$HOSTS-host zone, $CORES core(s) for the server, one run (bench/load.sh); full = ontime's chain"
set style fill solid 0.6
set boxwidth 0.6
set xtics rotate by -30
set ylabel "queries per second ($LOADER, saturating)"
set yrange [0:*]
plot '$out/plot.tsv' using 0:2:xtic(1) with boxes notitle
set ylabel "p99 latency at $LAT_RATE queries/s (ms)"
plot '$out/plot.tsv' using 0:3:xtic(1) with boxes notitle
EOG
	echo "plot: $out/load.png"
fi
