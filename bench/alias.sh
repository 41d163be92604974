#!/usr/bin/env bash
# Head-of-line proof for alias: 5% of the queries ask for a name whose
# ALIAS target's upstream answers 200 ms late (erratic, TTL 0: never
# cached, so every lookup goes upstream; concurrent ones share it), the
# rest are plain answers from the zone. Three servers, rounds interleaved:
#   none       the same server, offered the plain queries only (baseline)
#   alias      alias as built: the lookup leaves the worker (a codel
#              continuation) and comes back to the queue
#   on_worker  alias with on_worker: the worker waits for the lookup;
#              codel adds workers when all of its are blocked
#   fixed      on_worker with a fixed pool of workers (codel max_workers
#              1, the one CPU): what a worker that waits does to the rest
# Open-loop load (bench/loadgen), plain and ALIAS queries from two
# loadgens at once; the server is pinned to CPU 0 (GOMAXPROCS=1), the
# loadgens and the upstream to CPU 1.
#
#   bash bench/alias.sh            # RATE=10000 ROUNDS=5 SECONDS_PER_RUN=10
#
# Each figure printed is the median of the rounds: on a shared machine one
# round in five can have a p99 ten times the others, in any server.
#
# Bounded: ROUNDS x 4 runs of SECONDS_PER_RUN; every server is killed on exit.
set -euo pipefail
cd "$(dirname "$0")/.."
. bench/lib.sh
ROUNDS=${ROUNDS:-5}
SECS=${SECONDS_PER_RUN:-10}
RATE=${RATE:-10000}
out=bench/out/alias
mkdir -p "$out"
go build -o coredns ./cmd/coredns
go build -o "$out/loadgen" ./bench/loadgen

port=15396
uport=15397
pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; }
trap cleanup EXIT

{
	printf '$ORIGIN example.org.\n$TTL 300\n@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ NS ns1\nns1 A 192.0.2.53\n'
	printf 'alias 300 ALIAS x.slow.test.\n'
	for i in $(seq 1000); do printf 'host%d A 192.0.2.%d\n' "$i" $((i % 250 + 1)); done
} > "$out/db.example.org"
for i in $(seq 1000); do printf 'host%d.example.org. A\n' "$i"; done > "$out/queries-plain.txt"
echo "alias.example.org. A" > "$out/queries-alias.txt"

printf "slow.test:$uport {\n    bind 127.0.0.1\n    erratic {\n        delay 1 200ms\n    }\n}\n" > "$out/Corefile.upstream"
taskset -c 1 ./coredns -conf "$out/Corefile.upstream" -quiet > "$out/upstream.log" 2>&1 &
pids+=($!)

pid=
start() { # name
	local extra= codel=codel
	case $1 in
	on_worker) extra="\n        on_worker" ;;
	fixed) extra="\n        on_worker" codel="codel {\n        max_workers 1\n    }" ;;
	esac
	printf ".:$port {\n    bind 127.0.0.1\n    $codel\n    fastpack\n    alias {\n        upstream 127.0.0.1:$uport\n        timeout 400ms$extra\n    }\n    zonestore $PWD/$out/db.example.org example.org\n}\n" > "$out/Corefile.$1"
	GOMAXPROCS=1 taskset -c 0 ./coredns -conf "$out/Corefile.$1" -quiet > "$out/$1.log" 2>&1 &
	pid=$!
	pids+=($pid)
	answering $port example.org && return 0
	echo "$1 did not start"; cat "$out/$1.log"; exit 1
}
stop() { kill "$pid"; wait "$pid" 2>/dev/null || true; pid=; }
load() { # queries rate -> one JSON line
	taskset -c 1 "$out/loadgen" -server 127.0.0.1:$port -queries "$1" -rate "$2" -duration "${SECS}s" -warmup 1s -json
}

plain_rate=$(echo "$RATE * 0.95" | bc)
alias_rate=$(echo "$RATE * 0.05" | bc)
: > "$out/results.tsv"
for round in $(seq "$ROUNDS"); do
	for s in none alias on_worker fixed; do
		start $s
		if [ $s = none ]; then
			p=$(load "$out/queries-plain.txt" "$plain_rate")
			a='{"p50_ms":0,"p99_ms":0,"answered":0,"sent":1}'
		else
			load "$out/queries-alias.txt" "$alias_rate" > "$out/alias.json" &
			lg=$!
			p=$(load "$out/queries-plain.txt" "$plain_rate")
			wait $lg
			a=$(cat "$out/alias.json")
		fi
		stop
		printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$s" \
			"$(echo "$p" | field p50_ms)" "$(echo "$p" | field p99_ms)" "$(echo "$p" | field p999_ms)" "$(echo "$p" | field on_time_rate)" \
			"$(echo "$a" | field p50_ms)" "$(echo "$a" | field p99_ms)" \
			"$(echo "$(echo "$a" | field answered) / $(echo "$a" | field sent)" | bc -l)" >> "$out/results.tsv"
	done
done
cp "$out/results.tsv" bench/alias-results.tsv
# Columns of results.tsv: round, server, plain p50, p99, p99.9 (ms), plain
# share on time (100 ms), ALIAS p50, p99 (ms), ALIAS share answered.
median() { # server column
	awk -F'\t' -v s="$1" -v c="$2" '$2 == s { print $c }' "$out/results.tsv" | sort -g |
		awk '{ v[NR] = $1 } END { print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2) }'
}
base=$(median none 4)
printf "%-10s %11s %11s %12s %9s %12s %11s %11s %14s\n" server "plain p50" "plain p99" "plain p99.9" "p99/none" "plain ontime" "ALIAS p50" "ALIAS p99" "ALIAS answered"
for s in none alias on_worker fixed; do
	p50=$(median $s 3) p99=$(median $s 4) p999=$(median $s 5) ot=$(median $s 6) a50=$(median $s 7) a99=$(median $s 8) aa=$(median $s 9)
	if [ "$(echo "$p50 == 0" | bc)" = 1 ]; then # nothing answered: no percentiles
		printf "%-10s %11s %11s %12s %9s %11.2f%% %11s %11s %13.2f%%\n" $s - - - - "$(echo "100 * $ot" | bc -l)" - - "$(echo "100 * $aa" | bc -l)"
		continue
	fi
	printf "%-10s %8.3f ms %8.3f ms %9.3f ms %8.2fx %11.2f%% %8.1f ms %8.1f ms %13.2f%%\n" $s "$p50" "$p99" "$p999" \
		"$(echo "$p99 / $base" | bc -l)" "$(echo "100 * $ot" | bc -l)" "$a50" "$a99" "$(echo "100 * $aa" | bc -l)"
done
