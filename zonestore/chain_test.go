package zonestore

import (
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestChainsKnotAnswersAlike: answers that TestRandomZonesAsKnot (test/)
// found differing from Knot's, each now as Knot answers it, but for a
// record Knot sends twice, which is here once (a second additional
// record for a second MX with one target; a DNAME loop's CNAME: RFC 2181
// section 5 has no record twice in an RRset).
func TestChainsKnotAnswersAlike(t *testing.T) {
	for _, tc := range []struct {
		name, zone, qname string
		qtype             uint16
		rcode             int
		answer, extra     []string
	}{{
		// An additional-section target that only a wildcard covers has
		// the wildcard's addresses, under the target's name.
		name:  "target covered by a wildcard",
		zone:  "mx MX 10 w.c\n*.c A 192.0.2.8\n*.c TXT \"no\"\n",
		qname: "mx.example.org.", qtype: dns.TypeMX,
		answer: []string{"mx.example.org. MX 10 w.c.example.org."},
		extra:  []string{"w.c.example.org. A 192.0.2.8"},
	}, {
		name:  "two targets covered by one wildcard",
		zone:  "mx MX 10 w.c\nmx MX 20 w.c\n*.c A 192.0.2.8\n",
		qname: "mx.example.org.", qtype: dns.TypeMX,
		answer: []string{"mx.example.org. MX 10 w.c.example.org.", "mx.example.org. MX 20 w.c.example.org."},
		extra:  []string{"w.c.example.org. A 192.0.2.8"},
	}, {
		// An SVCB whose target is the name asked, both a wildcard's: the
		// target's SVCB is the answer, and is not added again.
		name:  "wildcard SVCB that names itself",
		zone:  "*.c SVCB 1 w.c alpn=h2\n*.c A 192.0.2.8\n",
		qname: "w.c.example.org.", qtype: dns.TypeSVCB,
		answer: []string{`w.c.example.org. SVCB 1 w.c.example.org. alpn="h2"`},
		extra:  []string{"w.c.example.org. A 192.0.2.8"},
	}, {
		// The same asked in mixed case: the answer's record is a copy
		// in the question's case, and still the additional SVCB's.
		name:  "SVCB that names itself, asked in mixed case",
		zone:  "s SVCB 1 s alpn=h2\ns A 192.0.2.9\n",
		qname: "S.example.org.", qtype: dns.TypeSVCB,
		answer: []string{`S.example.org. SVCB 1 s.example.org. alpn="h2"`},
		extra:  []string{"s.example.org. A 192.0.2.9"},
	}, {
		// Below a cut a wildcard covers nothing: no addresses for x.sub.
		name:  "target below a cut",
		zone:  "mx MX 10 x.sub\nsub NS ns.example.net.\n*.sub A 192.0.2.9\n",
		qname: "mx.example.org.", qtype: dns.TypeMX,
		answer: []string{"mx.example.org. MX 10 x.sub.example.org."},
	}, {
		// A wildcard's CNAME to a name it covers: the name asked (the
		// wildcard's own) gets its CNAME, and the name it leads to one
		// too, before the loop ends the chain.
		name:  "wildcard CNAME into itself, asked by its own name",
		zone:  "*.c CNAME w.c\n",
		qname: "*.c.example.org.", qtype: dns.TypeA,
		answer: []string{"*.c.example.org. CNAME w.c.example.org.", "w.c.example.org. CNAME w.c.example.org."},
	}, {
		name:  "wildcard CNAME into itself, asked by the name it leads to",
		zone:  "*.c CNAME w.c\n",
		qname: "w.c.example.org.", qtype: dns.TypeA,
		answer: []string{"w.c.example.org. CNAME w.c.example.org."},
	}, {
		// c's DNAME met twice, for two names: no loop, and the chain
		// ends where a.b does not exist.
		name:  "DNAME met again for another name",
		zone:  "c DNAME b\nd.b CNAME a.c\n",
		qname: "d.c.example.org.", qtype: dns.TypeA,
		rcode: dns.RcodeNameError,
		answer: []string{"c.example.org. DNAME b.example.org.", "d.c.example.org. CNAME d.b.example.org.",
			"d.b.example.org. CNAME a.c.example.org.", "a.c.example.org. CNAME a.b.example.org."},
	}, {
		// A DNAME met again for a name it made a CNAME for: a loop, and
		// the chain ends (Knot sends d.c's CNAME a second time first).
		name:  "DNAME loop",
		zone:  "c DNAME b\nd.b CNAME d.c\n",
		qname: "d.c.example.org.", qtype: dns.TypeA,
		answer: []string{"c.example.org. DNAME b.example.org.", "d.c.example.org. CNAME d.b.example.org.",
			"d.b.example.org. CNAME d.c.example.org."},
	}, {
		// Asked for the DNAME itself, the chain comes back to its owner:
		// the record once.
		name:  "DNAME asked, met on the way",
		zone:  "c DNAME w\n*.w CNAME c\n",
		qname: "x.c.example.org.", qtype: dns.TypeDNAME,
		answer: []string{"c.example.org. DNAME w.example.org.", "x.c.example.org. CNAME x.w.example.org.",
			"x.w.example.org. CNAME c.example.org."},
	}} {
		t.Run(tc.name, func(t *testing.T) {
			z, err := parse(t, head+tc.zone)
			if err != nil {
				t.Fatal(err)
			}
			res := z.Lookup(tc.qname, tc.qtype, false)
			if res.Rcode != tc.rcode {
				t.Errorf("rcode %s, want %s", dns.RcodeToString[res.Rcode], dns.RcodeToString[tc.rcode])
			}
			if got := rrStrings(res.Answer); !slices.Equal(got, sorted(tc.answer)) {
				t.Errorf("answer:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(sorted(tc.answer), "\n  "))
			}
			if got := rrStrings(res.Extra); !slices.Equal(got, sorted(tc.extra)) {
				t.Errorf("additional:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(sorted(tc.extra), "\n  "))
			}
		})
	}
}

// rrStrings renders records as "owner TYPE rdata", sorted.
func rrStrings(rrs []dns.RR) []string {
	out := []string{}
	for _, rr := range rrs {
		h := rr.Header()
		rdata := strings.TrimPrefix(rr.String(), h.String())
		out = append(out, h.Name+" "+dns.TypeToString[h.Rrtype]+" "+rdata)
	}
	slices.Sort(out)
	return out
}

func sorted(s []string) []string {
	out := append([]string{}, s...)
	slices.Sort(out)
	if out == nil {
		out = []string{}
	}
	return out
}

// TestSignedAnswersKnotAnswersAlike: the same for the pre-signed
// conformance zone asked with DO.
func TestSignedAnswersKnotAnswersAlike(t *testing.T) {
	z, err := ParseFile("../testdata/zones/signed.test.zone", "signed.test")
	if err != nil {
		t.Fatal(err)
	}
	types := func(rrs []dns.RR) []string {
		var out []string
		for _, rr := range rrs {
			out = append(out, rr.Header().Name+" "+dns.TypeToString[rr.Header().Rrtype])
		}
		slices.Sort(out)
		return out
	}

	// NSEC is the name's own, as CNAME and RRSIG are: no CNAME followed.
	res := z.Lookup("ftp.signed.test.", dns.TypeNSEC, true)
	if got, want := types(res.Answer), []string{"ftp.signed.test. NSEC", "ftp.signed.test. RRSIG"}; !slices.Equal(got, want) {
		t.Errorf("ftp NSEC: answer %v, want %v", got, want)
	}

	// An RRSIG answer names no host: nothing added for it (mx's lowest
	// signed type is MX, whose targets are in the zone).
	res = z.Lookup("mx.signed.test.", dns.TypeRRSIG, true)
	if len(res.Answer) == 0 || len(res.Extra) != 0 {
		t.Errorf("mx RRSIG: answer %v, additional %v; want signatures and nothing added", types(res.Answer), types(res.Extra))
	}

	// A wildcard's NSEC, asked for by a name it covers, is the answer
	// under that name; where it is also the proof of the expansion (a.wild
	// sorts between *.wild and sub.wild, so *.wild's NSEC covers it), it
	// is not sent again, as Knot answers. (After a CNAME it is, as
	// Knot's: test/random_test.go meets both.)
	res = z.Lookup("a.wild.signed.test.", dns.TypeNSEC, true)
	if got, want := types(res.Answer), []string{"a.wild.signed.test. NSEC", "a.wild.signed.test. RRSIG"}; !slices.Equal(got, want) {
		t.Errorf("a.wild NSEC: answer %v, want %v", got, want)
	}
	if got := types(res.Ns); len(got) != 0 {
		t.Errorf("a.wild NSEC: authority %v, want none (the answer is the proof)", got)
	}
}
