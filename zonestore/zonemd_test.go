package zonestore

import (
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
)

// rfc8976A1 is the simple EXAMPLE zone of RFC 8976 appendix A.1, with its
// SHA-384 digest.
const rfc8976A1 = `example.      86400  IN  SOA     ns1 admin 2018031900 (
                                 1800 900 604800 86400 )
              86400  IN  NS      ns1
              86400  IN  NS      ns2
              86400  IN  ZONEMD  2018031900 1 1 (
                                 c68090d90a7aed71
                                 6bc459f9340e3d7c
                                 1370d4d24b7e2fc3
                                 a1ddc0b9a87153b9
                                 a9713b3c9ae5cc27
                                 777f98b8e730044c )
ns1           3600   IN  A       203.0.113.63
ns2           3600   IN  AAAA    2001:db8::63
`

func parseExample(t *testing.T, text string) *Zone {
	t.Helper()
	z, err := Parse(strings.NewReader(text), "example.", "example.zone")
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// TestVerifyZONEMD: RFC 8976's example verifies; a record changed, added
// or of another case in a name that is lowercased, a ZONEMD of another
// serial, scheme or hash, two of one kind, or none, does not, and the
// error says why.
func TestVerifyZONEMD(t *testing.T) {
	if err := parseExample(t, rfc8976A1).VerifyZONEMD(); err != nil {
		t.Fatalf("RFC 8976 A.1: %v", err)
	}
	if err := parseExample(t, strings.Replace(rfc8976A1, "NS      ns2", "NS      NS2", 1)).VerifyZONEMD(); err != nil {
		t.Errorf("an NS target in capitals (lowercased in canonical form): %v", err)
	}
	for _, tc := range []struct{ name, text, want string }{
		{"an address changed", strings.Replace(rfc8976A1, "203.0.113.63", "203.0.113.64", 1), "SHA-384 digest is"},
		{"a record added", rfc8976A1 + "www 3600 IN A 192.0.2.1\n", "SHA-384 digest is"},
		{"a TTL changed", strings.Replace(rfc8976A1, "ns1           3600", "ns1           3601", 1), "SHA-384 digest is"},
		{"another serial", strings.Replace(rfc8976A1, "ZONEMD  2018031900", "ZONEMD  2018031901", 1), "serial 2018031901 is not the SOA's 2018031900"},
		{"another scheme", strings.Replace(rfc8976A1, "2018031900 1 1", "2018031900 2 1", 1), "scheme 2 is not SIMPLE"},
		{"another hash", strings.Replace(rfc8976A1, "2018031900 1 1", "2018031900 1 240", 1), "hash algorithm 240"},
		{"two of one kind", strings.Replace(rfc8976A1, "ns1           3600", "@ 86400 IN ZONEMD 2018031900 1 1 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\nns1           3600", 1), "two ZONEMD records"},
		{"none", rfc8976A1[:strings.Index(rfc8976A1, "              86400  IN  ZONEMD")] + rfc8976A1[strings.Index(rfc8976A1, "ns1           3600"):], "no ZONEMD record"},
	} {
		err := parseExample(t, tc.text).VerifyZONEMD()
		if err == nil || !errors.Is(err, ErrZONEMD) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an ErrZONEMD saying %q", tc.name, err, tc.want)
		}
	}
	// A second record of a known kind verifies the zone where the first
	// does not (section 4: one verified is enough).
	two := strings.Replace(rfc8976A1, "ns1           3600", "@ 86400 IN ZONEMD 2018031900 1 2 00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\nns1           3600", 1)
	if err := parseExample(t, two).VerifyZONEMD(); err != nil {
		t.Errorf("a good SHA-384 record beside a wrong SHA-512 one: %v", err)
	}
}

// TestCanonicalName: the letters A to Z, and only they, lowercased, as
// themselves or escaped; an octet that is no UTF-8 kept.
func TestCanonicalName(t *testing.T) {
	for in, want := range map[string]string{
		"www.example.org.":   "www.example.org.",
		"WWW.Example.ORG":    "www.example.org.",
		"\x89.example.":      "\x89.example.",
		`\065b\067.example.`: "abc.example.",
		`\A\.b.example.`:     `\a\.b.example.`,
		`\137\032x.example.`: `\137\032x.example.`,
		"\xc3\x89T\xc3\xa9.": "\xc3\x89t\xc3\xa9.",
	} {
		if got := canonicalName(in); got != want {
			t.Errorf("canonicalName(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestWithZONEMD: the version with a digest made here verifies, with
// either hash, in place of a ZONEMD record the zone had; the version it
// was made from is unchanged; a signed zone is refused.
func TestWithZONEMD(t *testing.T) {
	z := parseExample(t, strings.Replace(rfc8976A1, "2018031900 1 1", "2018031900 1 2", 1)) // a SHA-512 record of a SHA-384 digest: wrong
	if err := z.VerifyZONEMD(); err == nil {
		t.Fatal("the wrong record verifies")
	}
	for _, h := range []uint8{ZONEMDSHA384, ZONEMDSHA512} {
		with, err := z.WithZONEMD(h)
		if err != nil {
			t.Fatal(err)
		}
		if err := with.VerifyZONEMD(); err != nil {
			t.Errorf("hash %d: %v", h, err)
		}
		if r := with.Lookup("example.", dns.TypeZONEMD, false); len(r.Answer) != 1 || r.Answer[0].(*dns.ZONEMD).Hash != h || r.Answer[0].Header().Ttl != 86400 {
			t.Errorf("hash %d: the apex's ZONEMD records: %v, want one of hash %d at the SOA's TTL", h, r.Answer, h)
		}
		if with.Serial() != z.Serial() || with.Records() != z.Records() {
			t.Errorf("hash %d: serial %d and %d records, want %d and %d", h, with.Serial(), with.Records(), z.Serial(), z.Records())
		}
	}
	if err := z.VerifyZONEMD(); err == nil {
		t.Error("the version WithZONEMD was made from changed")
	}
	if a := parseExample(t, rfc8976A1).Digest(ZONEMDSHA384); !strings.EqualFold(hex.EncodeToString(a), "c68090d90a7aed716bc459f9340e3d7c1370d4d24b7e2fc3a1ddc0b9a87153b9a9713b3c9ae5cc27777f98b8e730044c") {
		t.Errorf("RFC 8976 A.1's digest: %x", a)
	}
	signed, err := ParseFile("../testdata/zones/signed.test.zone", "signed.test")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := signed.WithZONEMD(ZONEMDSHA384); err == nil || !errors.Is(err, ErrZONEMD) {
		t.Errorf("a signed zone: %v, want it refused", err)
	}
}

// BenchmarkDigest170k measures the digest of the load test's 170,000-host
// zone (RFC 8976 SIMPLE, SHA-384), what zonemd_verify and zonemd_generate
// cost each version: every record copied in canonical form, packed,
// sorted and hashed.
func BenchmarkDigest170k(b *testing.B) {
	z, err := Parse(strings.NewReader(workload.Zone(170000)), workload.Origin, "")
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for b.Loop() {
		z.Digest(ZONEMDSHA384)
	}
	b.ReportMetric(float64(z.Records()), "records")
}
