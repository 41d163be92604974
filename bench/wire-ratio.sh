#!/usr/bin/env bash
# wire's encoder against miekg/dns's PackBuffer, message by message: the
# sub-benchmarks of BenchmarkEncode take turns COUNT times (default
# 10), and each keeps its fastest run, so that both are measured in the
# same moments of this shared machine. Prints ns per message and the ratio,
# and the first-time figure: every name scanned and every base64 text
# decoded as if the encoder had never met them (wire/scanned.go and
# wire/decoded.go remember them from one message to the next). The last
# rows are BenchmarkEncodeVaried: A+2NS+glue for each of 8,192 hosts in turn,
# as a server answers a zone's many names; and BenchmarkEncodeNegative:
# NXDOMAIN with the zone's SOA for 8,192 names never asked before, as a
# random-subdomain flood is answered.
#
#   bash bench/wire-ratio.sh [COUNT]
set -euo pipefail
cd "$(dirname "$0")/.."
go test -run XXX -bench '^BenchmarkEncode(Varied|Negative)?$' -benchmem -benchtime 100ms -count "${1:-10}" ./wire |
	awk '/^BenchmarkEncode(Varied|Negative)?\// {
		split($1, p, "/")
		if (p[1] == "BenchmarkEncodeVaried") { p[3] = p[2]; p[2] = "8192 hosts" }
		if (p[1] == "BenchmarkEncodeNegative") { p[3] = p[2]; p[2] = "8192 NXDOMAIN" }
		sub(/-[0-9]+$/, "", p[3]); k = p[2] SUBSEP p[3]
		if (!(k in ns) || $3 < ns[k]) ns[k] = $3
		allocs[k] = $(NF-1)
		if (!(p[2] in seen)) { seen[p[2]] = 1; order[++n] = p[2] }
	}
	END {
		printf "%-16s %9s %7s %11s %7s %6s %12s\n", "message", "wire ns", "allocs", "PackBuffer", "allocs", "ratio", "first time"
		for (i = 1; i <= n; i++) {
			m = order[i]
			first = ((m, "wire-first") in ns) ? sprintf("%5.0f %5.2fx", ns[m, "wire-first"], ns[m, "PackBuffer"] / ns[m, "wire-first"]) : ""
			printf "%-16s %9.0f %7d %11.0f %7d %5.2fx %12s\n", m, ns[m, "wire"], allocs[m, "wire"], ns[m, "PackBuffer"], allocs[m, "PackBuffer"], ns[m, "PackBuffer"] / ns[m, "wire"], first
		}
	}'
