package test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/alias/record"
)

// axfr pulls zone from addr over TCP and returns its records, and the
// number of SOA records seen.
func axfr(t testing.TB, addr, zone string) []dns.RR {
	t.Helper()
	m := new(dns.Msg)
	m.SetAxfr(zone)
	env, err := new(dns.Transfer).In(m, addr)
	if err != nil {
		t.Fatalf("AXFR %s from %s: %v", zone, addr, err)
	}
	var rrs []dns.RR
	for e := range env {
		if e.Error != nil {
			t.Fatalf("AXFR %s from %s: %v", zone, addr, e.Error)
		}
		rrs = append(rrs, e.RR...)
	}
	return rrs
}

// TestAXFRMatchesKnot: the stock transfer plugin over zonestore sends each
// conformance zone (unsigned, NSEC-signed, NSEC3-signed) as Knot does:
// the SOA first and last, and the same records in between, as a set.
func TestAXFRMatchesKnot(t *testing.T) {
	zones := conformanceZones(t)
	knot := startKnot(t, zones)
	var body strings.Builder
	body.WriteString("    transfer {\n        to *\n    }\n")
	var names []string
	for _, z := range zones {
		fmt.Fprintf(&body, "    zonestore %s %s\n", z.path, z.origin)
		names = append(names, z.origin)
	}
	ours := startCoreDNS(t, body.String(), names...)
	for _, z := range zones {
		got, want := axfr(t, ours.addr, z.origin+"."), axfr(t, knot.addr, z.origin+".")
		if got[0].Header().Rrtype != dns.TypeSOA || got[len(got)-1].Header().Rrtype != dns.TypeSOA {
			t.Errorf("%s: AXFR does not begin and end with the SOA", z.origin)
		}
		if g, w := section(got), section(want); !slices.Equal(g, w) {
			t.Errorf("%s: AXFR has %d records, Knot's %d; first difference: %s", z.origin, len(g), len(w), firstDiff(g, w))
		}
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("ours %q, Knot's %q", a[i], b[i])
		}
	}
	return "one is a prefix of the other"
}

// TestAXFRCarriesALIAS: an ALIAS record is transferred as itself, while
// queries never see it.
func TestAXFRCarriesALIAS(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "@ 300 ALIAS cdn.example.net.", "www 300 ALIAS @")
	s := startCoreDNS(t, fmt.Sprintf("    transfer {\n        to *\n    }\n    zonestore %s example.org", zf), "example.org")
	var targets []string
	for _, rr := range axfr(t, s.addr, "example.org.") {
		if rr.Header().Rrtype == record.TypeALIAS {
			targets = append(targets, rr.Header().Name+" "+record.Target(rr))
		}
	}
	slices.Sort(targets)
	if strings.Join(targets, ", ") != "example.org. cdn.example.net., www.example.org. example.org." {
		t.Fatalf("ALIAS records transferred: %v", targets)
	}
}

// TestIXFRUpToDate: an IXFR from the current serial is answered with the
// SOA alone; from an older one, with the whole zone (AXFR fallback).
func TestIXFRUpToDate(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 5, "www A 192.0.2.1")
	s := startCoreDNS(t, fmt.Sprintf("    transfer {\n        to *\n    }\n    zonestore %s example.org", zf), "example.org")
	for _, tc := range []struct {
		serial uint32
		want   int
	}{{5, 1}, {6, 1}, {4, 5}} {
		m := new(dns.Msg)
		m.SetIxfr("example.org.", tc.serial, "ns1.example.org.", "hostmaster.example.org.")
		env, err := new(dns.Transfer).In(m, s.addr)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for e := range env {
			if e.Error != nil {
				t.Fatal(e.Error)
			}
			n += len(e.RR)
		}
		if n != tc.want {
			t.Errorf("IXFR from serial %d: %d records, want %d", tc.serial, n, tc.want)
		}
	}
}
