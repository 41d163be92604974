#!/usr/bin/env bash
# A/B of the wire encoder between two commits: the test binary of OLD
# (default HEAD) and of the working tree take turns ROUNDS times (default
# 20; the order alternates each round), each a 50 ms run of every message
# on CPU 1. Prints, per message, each side's fastest run and the median of
# the rounds' new/old ratios: this machine's noise moves a single run by
# half, and the two sides of a round share its moment.
#
#   OLD=HEAD~1 bash bench/wire-ab.sh [ROUNDS] [BENCH_PATTERN]
#
# Another package's benchmarks the same way: PKG (default ./wire) and
# BENCHTIME (default 50ms), e.g. the whole chain in process:
#
#   PKG=./plugin/codel BENCHTIME=1s bash bench/wire-ab.sh 8 '^BenchmarkChain$'
#
# OLDFLAGS and NEWFLAGS are added to each side's go test -c, e.g. the chain
# with and without the build's profile (cmd/coredns/default.pgo):
#
#   OLDFLAGS=-pgo=off NEWFLAGS=-pgo=$PWD/cmd/coredns/default.pgo \
#     PKG=./plugin/codel BENCHTIME=1s bash bench/wire-ab.sh 12 '^BenchmarkChain$'
#
# CPUS (default 1) is the CPU list both sides run on (taskset), and so
# their GOMAXPROCS, e.g. the server in process on both CPUs:
#
#   CPUS=0,1 PKG=./plugin/codel BENCHTIME=1s bash bench/wire-ab.sh 8 '^BenchmarkQueuedChain$'
#
# OLDPATTERN compares two benchmarks of the working tree instead of two
# commits: the old side runs the one OLDPATTERN names, the new side the one
# BENCH_PATTERN names (one benchmark each), e.g. the chain with fastpack
# against the chain without it:
#
#   OLDPATTERN='^BenchmarkChain$/without-prometheus-fastpack$' PKG=./plugin/codel \
#     BENCHTIME=1s bash bench/wire-ab.sh 12 '^BenchmarkChain$/without-prometheus$'
set -euo pipefail
cd "$(dirname "$0")/.."
rounds=${1:-20}
pattern=${2:-'^BenchmarkEncode$/.*/wire'}
tmp=$(mktemp -d)
trap 'git worktree remove --force "$tmp/old" 2>/dev/null || true; rm -rf "$tmp"' EXIT
pkg=${PKG:-./wire}
go test -c ${NEWFLAGS:-} -o "$tmp/new.test" "$pkg"
if [ -n "${OLDPATTERN:-}" ]; then
	cp "$tmp/new.test" "$tmp/old.test"
else
	git worktree add -q --detach "$tmp/old" "${OLD:-HEAD}"
	(cd "$tmp/old" && go test -c ${OLDFLAGS:-} -o "$tmp/old.test" "$pkg")
fi
# The test binary runs in its package's directory, as go test runs it.
dir=$(go list -f '{{.Dir}}' "$pkg")
for i in $(seq "$rounds"); do
	order="new old"
	if [ $((i % 2)) = 0 ]; then order="old new"; fi
	for v in $order; do
		p=$pattern
		if [ "$v" = old ] && [ -n "${OLDPATTERN:-}" ]; then p=$OLDPATTERN; fi
		(cd "$dir" && taskset -c "${CPUS:-1}" "$tmp/$v.test" -test.run XXX -test.bench "$p" -test.benchtime "${BENCHTIME:-50ms}") |
			awk -v v="$v" -v r="$i" -v same="${OLDPATTERN:+old-vs-new}" '/^Benchmark/ { sub(/-[0-9]+$/, "", $1); print r, v, (same != "" ? same : $1), $3 }'
	done
done | python3 -c '
import statistics, sys
runs = {}
for line in sys.stdin:
    r, side, bench, ns = line.split()
    runs.setdefault(bench, {}).setdefault(r, {})[side] = float(ns)
print("%-36s %8s %8s %8s %s" % ("benchmark", "old ns", "new ns", "new/old", "(rounds)"))
for bench, rs in runs.items():
    pairs = [p for p in rs.values() if len(p) == 2]
    if not pairs:  # a benchmark only one side has
        continue
    ratios = [p["new"] / p["old"] for p in pairs]
    print("%-36s %8.0f %8.0f %8.3f (%.2f-%.2f)" % (bench.replace("BenchmarkEncode/", "").replace("BenchmarkChain/", ""),
        min(p["old"] for p in pairs), min(p["new"] for p in pairs),
        statistics.median(ratios), min(ratios), max(ratios)))
'
