#!/usr/bin/env bash
# Regenerates the signed conformance zones from testdata/zones/example.org.tmpl:
#   signed.test.zone  NSEC
#   nsec3.test.zone   NSEC3, opt-out, no extra iterations (RFC 9276)
# and example.org.zone, the same data unsigned. Signatures run from 2026 to 2046,
# so the checked-in files stay valid for the tests for years.
# Needs dnssec-keygen and dnssec-signzone (Debian package bind9-utils); the
# outputs are committed, so neither tests nor CI run this.
set -euo pipefail
cd "$(dirname "$0")/../testdata/zones"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

grep -v '^; The conformance\|^; other origins\|^; Every case' example.org.tmpl > "$tmp/all"
sed '/^; --- unsigned only/,$d' "$tmp/all" > "$tmp/body"
{ echo '$ORIGIN example.org.'; cat "$tmp/all"; } > example.org.zone

sign() {
	local origin=$1; shift
	{ echo "\$ORIGIN $origin."; cat "$tmp/body"; } > "$tmp/$origin.zone"
	dnssec-keygen -q -K "$tmp" -a ECDSAP256SHA256 -f KSK -n ZONE "$origin" >/dev/null
	dnssec-keygen -q -K "$tmp" -a ECDSAP256SHA256 -n ZONE "$origin" >/dev/null
	dnssec-signzone -q -K "$tmp" -S -O full -o "$origin" -s 20260101000000 -e 20460101000000 \
		-f "$origin.zone" "$@" "$tmp/$origin.zone" >/dev/null
}
sign signed.test
sign nsec3.test -3 cafe -H 0 -A
echo "wrote $(pwd)/{example.org,signed.test,nsec3.test}.zone"
