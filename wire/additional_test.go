package wire

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestAdditionalDataLeftOutWithoutTC: where the additional section does
// not fit, an answer goes without it and without TC, and an RRset there
// that fits goes without the signature that does not (RFC 2181 section 9,
// RFC 4035 section 3.1.1, as Knot DNS answers); a referral's glue that
// does not fit sets TC (RFC 9471); and an answer that does not fit sets
// TC, as ever.
func TestAdditionalDataLeftOutWithoutTC(t *testing.T) {
	rr := func(s string) dns.RR {
		r, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	sig := func(owner, covers string) dns.RR { // a signature of 512 octets, RSA-4096's
		return rr(owner + " 3600 IN RRSIG " + covers + " 8 3 3600 20460101000000 20260101000000 1 example.org. " + strings.Repeat("A", 680) + "AA==")
	}
	mx := new(dns.Msg)
	mx.SetQuestion("example.org.", dns.TypeMX)
	mx.Response, mx.Authoritative = true, true
	mx.Answer = []dns.RR{rr("example.org. 3600 IN MX 10 b.example.org."), sig("example.org.", "MX")}
	mx.Extra = []dns.RR{rr("b.example.org. 3600 IN A 192.0.2.3"), rr("b.example.org. 3600 IN A 192.0.2.4"), sig("b.example.org.", "A")}

	ref := new(dns.Msg)
	ref.SetQuestion("www.sub.example.org.", dns.TypeA)
	ref.Response = true
	long := strings.Repeat("n", 60) + "." + strings.Repeat("s", 60) + ".sub.example.org."
	for _, ns := range []string{"a", "b", "c", "d"} {
		ref.Ns = append(ref.Ns, rr("sub.example.org. 3600 IN NS "+ns+long))
		ref.Extra = append(ref.Extra, rr(ns+long+" 3600 IN A 192.0.2.53"), rr(ns+long+" 3600 IN AAAA 2001:db8::53"))
	}

	e := NewEncoder()
	size := func(m *dns.Msg, keep int) int { // the octets of m with the first keep additional records
		c := m.Copy()
		c.Extra = c.Extra[:keep]
		b, err := e.Encode(nil, c, 0)
		if err != nil {
			t.Fatal(err)
		}
		return len(b)
	}
	for _, tc := range []struct {
		name    string
		m       *dns.Msg
		size    int
		extra   int // additional records kept
		tc      bool
		answers int
	}{
		{"all fits", mx, size(mx, 3), 3, false, 2},
		{"the set fits, not its signature", mx, size(mx, 3) - 1, 2, false, 2},
		{"the set fits in part", mx, size(mx, 2) - 1, 0, false, 2},
		{"no room for additional data", mx, size(mx, 0), 0, false, 2},
		{"no room for the answer's signature", mx, size(mx, 0) - 1, 0, true, 0}, // an RRset goes with its signatures
		{"a referral's glue in part", ref, size(ref, 8) - 1, 7, true, 0},
		{"a referral's glue whole", ref, size(ref, 8), 8, false, 0},
	} {
		if tc.size < 512 {
			t.Fatalf("%s: %d octets, under the least size of 512", tc.name, tc.size)
		}
		b, err := e.Encode(nil, tc.m, tc.size)
		if err != nil {
			t.Fatal(err)
		}
		var got dns.Msg
		if err := got.Unpack(b); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if len(b) > tc.size || got.Truncated != tc.tc || len(got.Extra) != tc.extra || len(got.Answer) != tc.answers {
			t.Errorf("%s (%d octets at most): %d octets, TC %v, %d answers, %d additional; want TC %v, %d answers, %d additional",
				tc.name, tc.size, len(b), got.Truncated, len(got.Answer), len(got.Extra), tc.tc, tc.answers, tc.extra)
		}
		if _, err := parity(e, tc.m, tc.size); err != nil {
			t.Errorf("%s: parity: %v", tc.name, err)
		}
	}
}
