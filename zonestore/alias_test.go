package zonestore

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/alias/record"
)

// TestAliasIsReportedNeverAnswered: an A or AAAA question that reaches a
// name with an ALIAS (directly, through a CNAME, or by a wildcard) reports
// the ALIAS, spelled as the answer spells the name, with the zone's
// negative SOA; the answer itself is what the zone holds. The record is
// never an answer: not to its own type, not to ANY.
func TestAliasIsReportedNeverAnswered(t *testing.T) {
	z, err := parse(t, head+`@ 300 ALIAS cdn.example.net.
@ MX 10 mail
mail A 192.0.2.25
www CNAME @
both 300 ALIAS lb.example.net.
both 60 A 192.0.2.80
only 300 ALIAS lb
*.wild 300 ALIAS w.example.net.
`)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		qname       string
		qtype       uint16
		owner       string // the reported ALIAS owner, "" for none
		target      string
		answers, ns int
	}{
		{"example.org.", dns.TypeA, "example.org.", "cdn.example.net.", 0, 1},
		{"EXAMPLE.org.", dns.TypeAAAA, "EXAMPLE.org.", "cdn.example.net.", 0, 1},
		{"www.example.org.", dns.TypeA, "example.org.", "cdn.example.net.", 1, 1},
		{"both.example.org.", dns.TypeA, "both.example.org.", "lb.example.net.", 1, 0},
		{"only.example.org.", dns.TypeA, "only.example.org.", "lb.example.org.", 0, 1},
		{"x.wild.example.org.", dns.TypeA, "x.wild.example.org.", "w.example.net.", 0, 1},
		{"example.org.", dns.TypeMX, "", "", 1, 0},
		{"example.org.", record.TypeALIAS, "", "", 0, 1},
		{"only.example.org.", dns.TypeANY, "", "", 0, 1},
	} {
		res := z.Lookup(tc.qname, tc.qtype, false)
		if res.Rcode != dns.RcodeSuccess || len(res.Answer) != tc.answers || len(res.Ns) != tc.ns {
			t.Errorf("%s %s: rcode %d, answer %v, ns %v", tc.qname, dns.TypeToString[tc.qtype], res.Rcode, res.Answer, res.Ns)
		}
		for _, rr := range res.Answer {
			if rr.Header().Rrtype == record.TypeALIAS {
				t.Errorf("%s %s: ALIAS in the answer: %v", tc.qname, dns.TypeToString[tc.qtype], rr)
			}
		}
		switch {
		case tc.owner == "" && res.Alias != nil:
			t.Errorf("%s %s: reported %v", tc.qname, dns.TypeToString[tc.qtype], res.Alias)
		case tc.owner != "" && (res.Alias == nil || res.Alias.Header().Name != tc.owner || record.Target(res.Alias) != tc.target || res.SOA == nil):
			t.Errorf("%s %s: reported %v with SOA %v, want %s -> %s", tc.qname, dns.TypeToString[tc.qtype], res.Alias, res.SOA, tc.owner, tc.target)
		}
	}
	// The zone's own record keeps its spelling when a question changes case.
	if a := z.Lookup("example.org.", dns.TypeA, false).Alias; a == nil {
		t.Fatal("no ALIAS at the apex")
	} else if z.Lookup("EXAMPLE.org.", dns.TypeA, false); a.Header().Name != "example.org." {
		t.Fatalf("the zone's record was renamed: %v", a)
	}
}
