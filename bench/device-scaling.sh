#!/usr/bin/env bash
# The scaling series (issue 7) on a machine that has the cores for it but
# neither Go, Knot DNS nor dnsperf, and no network to fetch them: the
# device machine lent to some sessions (16 CPUs).
#
#   bash bench/device-scaling.sh pack   # here: fills .dev/ (ignored)
#   BASE=HEAD~1 bash bench/device-scaling.sh pack   # and "base", built from that commit
#   BASE=a42d55e PATCH=bench/experiments/answer-cache.patch bash bench/device-scaling.sh pack   # a scratch build (bench/README.md: experiments/)
#   bash bench/device-scaling.sh run    # there, with .dev carried: writes $OUT
#   VARIANTS="2 full; 2 full PROCS=3" bash bench/device-scaling.sh variants   # there, after run
#
# pack builds ontime, the load tool and the chain's benchmark binary without
# cgo (static), generates the bench zone and its query mix, and copies
# knotd, dnsperf, bc, pgrep, taskset and getconf with every shared library
# they load and this machine's dynamic loader, each run through that loader
# by a wrapper in .dev/bin: they need nothing of the other machine's
# system. All of it is compressed: what travels is 64 MiB at most. The
# scripts' readiness check (dig) is a few lines of Python there, since
# dig's libraries (ICU among them) are larger than that.
#
# run puts those on PATH and runs bench/load.sh with BUILT=1 for ontime's
# full chain and Knot DNS at 1, 2, 4, 8 and 16 cores, rounds interleaved
# (CORES, ROUNDS, SECONDS_PER_RUN and load.sh's DIAG override), then BenchmarkChainParallel
# and BenchmarkQueuedChain at -cpu 1,2,4,8,16: the chain in process, where
# no load tool shares the CPUs. Bounded like load.sh: every run stops by
# itself and every server it starts is killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
dev=.dev

pack() {
	rm -rf "$dev"
	mkdir -p "$dev/bin" "$dev/real" "$dev/lib" "$dev/out/bin"
	CGO_ENABLED=0 go build -ldflags '-s -w' -o "$dev/out/coredns" ./cmd/coredns
	CGO_ENABLED=0 go build -ldflags '-s -w' -o "$dev/out/bin/loadgen" ./bench/loadgen
	CGO_ENABLED=0 go test -ldflags '-s -w' -c -o "$dev/out/codel.test" ./plugin/codel
	go run ./bench/genzone -hosts "${HOSTS:-50000}" -zone "$dev/out/db.bench" -queries "$dev/out/queries.txt"
	if [ -n "${BASE:-}" ]; then # load.sh's base: the full chain before a change
		rm -rf "$dev/base-src"
		git worktree add -f --detach "$dev/base-src" "$BASE" >/dev/null
		[ -z "${PATCH:-}" ] || git -C "$dev/base-src" apply "$PWD/$PATCH" # a scratch build, as load.sh's
		(cd "$dev/base-src" && CGO_ENABLED=0 go build -ldflags '-s -w' -o ../out/coredns-base ./cmd/coredns)
		git worktree remove -f "$dev/base-src"
		xz -T0 -6 "$dev/out/coredns-base"
	fi
	xz -T0 -6 "$dev/out/coredns" "$dev/out/codel.test" "$dev/out/db.bench" "$dev/out/queries.txt" "$dev/out/bin/loadgen"
	local loader=/lib64/ld-linux-x86-64.so.2 tool path
	cp -L "$loader" "$dev/lib/"
	for tool in knotd dnsperf bc pgrep taskset getconf; do
		path=$(command -v "$tool") || { echo "need $tool here (make bench-deps)"; exit 1; }
		cp -L "$path" "$dev/real/$tool"
		ldd "$path" | awk '$3 ~ /^\// {print $3}' | xargs -r cp -Ln -t "$dev/lib/"
		cat > "$dev/bin/$tool" <<EOW
#!/bin/sh
# $tool from the machine that packed it, on that machine's libraries.
d=\$(dirname "\$(readlink -f "\$0")")/..
exec "\$d/lib/ld-linux-x86-64.so.2" --library-path "\$d/lib" "\$d/real/$tool" "\$@"
EOW
		chmod +x "$dev/bin/$tool"
	done
	cat > "$dev/bin/dig" <<'EOW'
#!/usr/bin/env python3
# What lib.sh's answering asks of dig: does @HOST -p PORT answer NAME TYPE?
# Exit 0 on an answer with rcode NOERROR, 1 otherwise.
import random, socket, struct, sys
host, port, names = "127.0.0.1", 53, []
args = iter(sys.argv[1:])
for a in args:
    if a.startswith("@"): host = a[1:]
    elif a == "-p": port = int(next(args))
    elif not a.startswith("+"): names.append(a)
name, qtype = names[0], {"SOA": 6, "A": 1}[names[1] if len(names) > 1 else "A"]
qid = random.randrange(65536)
q = struct.pack(">HHHHHH", qid, 0, 1, 0, 0, 0)
q += b"".join(bytes([len(l)]) + l.encode() for l in name.strip(".").split(".")) + b"\0"
q += struct.pack(">HH", qtype, 1)
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1)
try:
    s.sendto(q, (host, port))
    r = s.recv(4096)
except OSError:
    sys.exit(1)
sys.exit(0 if len(r) >= 12 and struct.unpack(">H", r[:2])[0] == qid and r[3] & 15 == 0 else 1)
EOW
	chmod +x "$dev/bin/dig"
	tar -C "$dev" -cJf "$dev/lib.tar.xz" lib real && rm -rf "$dev/lib" "$dev/real"
	du -sh "$dev"
}

run() {
	[ -d "$dev/bin" ] || { echo "no $dev: pack it first, and carry it"; exit 1; }
	[ -d "$dev/lib" ] || tar -C "$dev" -xJf "$dev/lib.tar.xz"
	export PATH=$PWD/$dev/bin:$PATH
	local out=${OUT:-bench/out/device}
	mkdir -p "$out" bench/out/bin
	{ nproc; lscpu 2>/dev/null || true; uname -a; } > "$out/machine.txt"
	unxz() { python3 -c 'import lzma, shutil, sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' "$@"; }
	unxz "$dev/out/coredns.xz" coredns && chmod +x coredns
	if [ -f "$dev/out/coredns-base.xz" ]; then
		unxz "$dev/out/coredns-base.xz" bench/out/coredns-base && chmod +x bench/out/coredns-base
	fi
	unxz "$dev/out/codel.test.xz" bench/out/codel.test && chmod +x bench/out/codel.test
	unxz "$dev/out/db.bench.xz" bench/out/db.bench
	unxz "$dev/out/queries.txt.xz" bench/out/queries.txt
	unxz "$dev/out/bin/loadgen.xz" bench/out/bin/loadgen && chmod +x bench/out/bin/loadgen
	knotd --version | head -1
	dnsperf -h 2>&1 | head -1 || true
	BUILT=1 SERVERS="${SERVERS:-full knot}" CORES="${CORES:-1 2 4 8 16}" ROUNDS="${ROUNDS:-2}" \
		SECONDS_PER_RUN="${SECONDS_PER_RUN:-8}" bash bench/load.sh 2>&1 | tee "$out/load.txt"
	cp bench/out/results.tsv "$out/scaling-results.tsv"
	tar -C bench/out -czf "$out/diag.tgz" diag # metrics, and with DIAG=N profiles and traces
	[ -n "${BENCH_CPUS-x}" ] || return 0 # BENCH_CPUS= : no chain benchmarks
	(cd plugin/codel && ../../bench/out/codel.test -test.run XXX -test.bench 'ChainParallel/full$|QueuedChain' \
		-test.benchmem -test.cpu "${BENCH_CPUS:-1,2,4,8,16}") 2>&1 | tee "$out/chain-bench.txt"
}

# variants runs, after run has set the machine up (run it first, with
# SECONDS_PER_RUN=1), one server at a time under settings of its own, the
# variants interleaved over ROUNDS, each with load.sh's DIAG sampler:
# VARIANTS holds them, ;-separated, each "CORES SERVER [VAR=VALUE...]"
# (PROCS=3: ontime with GOMAXPROCS=3). Rows go to $OUT/rows.tsv, the
# variant first, and the sampler's reports to $OUT/sched.txt.
variants() {
	[ -d "$dev/lib" ] || { echo "run first: it unpacks what variants use"; exit 1; }
	export PATH=$PWD/$dev/bin:$PATH
	local out=${OUT:-bench/out/device} round v c s
	mkdir -p "$out"
	for round in $(seq "${ROUNDS:-2}"); do
		IFS=';' read -ra vs <<< "${VARIANTS//$'\n'/ }" # a list wrapped over lines is one list
		for v in "${vs[@]}"; do
			read -r c s rest <<< "$v"
			v="$c $s${rest:+ $rest}"
			# A run that fails leaves no row and no report, not the last one's.
			rm -f bench/out/results.tsv "bench/out/diag/$s@$c.r1.sched"
			# shellcheck disable=SC2086 # rest is VAR=VALUE words
			env $rest BUILT=1 SERVERS="$s" CORES="$c" DIAG="$c" DIAG_PROFILE=0 ROUNDS=1 \
				SECONDS_PER_RUN="${SECONDS_PER_RUN:-6}" LAT_SECS="${LAT_SECS:-1}" bash bench/load.sh > "$out/variant.log" 2>&1 || true
			tail -n 1 bench/out/results.tsv 2>/dev/null | sed "s|^|$round\t$v\t|" >> "$out/rows.tsv"
			{ echo "== round $round: $v"; cat "bench/out/diag/$s@$c.r1.sched" 2>/dev/null || echo "(no report: see $out/variant.log)"; } >> "$out/sched.txt"
		done
	done
	cat "$out/rows.tsv"
}

case "${1:-}" in
pack) pack ;;
run) run ;;
variants) variants ;;
*) echo "usage: $0 pack|run|variants"; exit 2 ;;
esac
