package zonestore

import (
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
	"github.com/ontimedns/ontime/internal/raceflag"
)

// responseText is a Response as text, for comparing answers.
func responseText(res *Response) string {
	m := new(dns.Msg)
	m.Answer, m.Ns, m.Extra = res.Answer, res.Ns, res.Extra
	m.Rcode, m.Authoritative = res.Rcode, res.Authoritative
	return m.String()
}

// TestReusedResponseAnswersAsFresh: one Response, made ready with Reuse
// before each answer (as zonestore's handler does between queries), gives
// every answer a fresh Response gives, on zones with wildcards, CNAME and
// DNAME chains, delegations with glue and NSEC and NSEC3 proofs, for names
// in any case; what a writer does to the sections between answers
// (appends, Truncate with its OPT record) changes neither the next answer
// nor what the zone answers.
func TestReusedResponseAnswersAsFresh(t *testing.T) {
	zones := conformanceZones(t)
	z, err := Parse(strings.NewReader(workload.Zone(2000)), workload.Origin, "")
	if err != nil {
		t.Fatal(err)
	}
	zones = append(zones, z)

	type query struct {
		z     *Zone
		name  string
		qtype uint16
		do    bool
	}
	var qs []query
	types := []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeMX, dns.TypeNS, dns.TypeCNAME, dns.TypeTXT, dns.TypeDS, dns.TypeANY}
	for _, z := range zones {
		for _, n := range z.allNodes() {
			for i, name := range []string{n.name, strings.ToUpper(n.name), "nx." + n.name, "A.b." + n.name} {
				qs = append(qs, query{z, name, types[(len(qs)+i)%len(types)], len(qs)%2 == 0})
			}
		}
	}
	fresh := make([]string, len(qs))
	for i, q := range qs {
		r := q.z.Lookup(q.name, q.qtype, q.do)
		fresh[i] = responseText(&r)
	}

	var res Response
	opt := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
	opt.SetUDPSize(512)
	for round := 0; round < 2; round++ {
		for i, q := range qs {
			res.Reuse()
			q.z.LookupInto(&res, q.name, q.qtype, q.do)
			if got := responseText(&res); got != fresh[i] {
				t.Fatalf("round %d, %s %s DO %v: reused\n%s\nfresh\n%s", round, q.name, dns.TypeToString[q.qtype], q.do, got, fresh[i])
			}
			m := new(dns.Msg)
			m.SetQuestion(q.name, q.qtype)
			m.Answer, m.Ns, m.Extra = res.Answer, res.Ns, res.Extra
			m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.name, Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{"appended"}})
			m.Extra = append(m.Extra, opt)
			m.Truncate(100)
		}
	}
	for i, q := range qs {
		r := q.z.Lookup(q.name, q.qtype, q.do)
		if got := responseText(&r); got != fresh[i] {
			t.Fatalf("%s %s DO %v: the zone now answers\n%s\nwant\n%s", q.name, dns.TypeToString[q.qtype], q.do, got, fresh[i])
		}
	}
}

// TestReusedResponseAllocatesNothing: with Reuse, answers that build their
// sections (a referral's glue, a wildcard's A records with the name asked
// as their owner, a CNAME and its target) allocate nothing once the
// Response's arrays have grown.
func TestReusedResponseAllocatesNothing(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	z, err := parse(t, head+"www A 192.0.2.1\n*.wild A 192.0.2.7\n*.wild AAAA 2001:db8::7\nc CNAME www\nsub NS ns.sub\nns.sub A 192.0.2.9\n")
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		name  string
		qtype uint16
	}{{"x.sub.example.org.", dns.TypeA}, {"x.wild.example.org.", dns.TypeA}, {"X.WILD.example.org.", dns.TypeAAAA}, {"c.example.org.", dns.TypeA}, {"WWW.example.org.", dns.TypeA}} {
		n, err := NewName(q.name)
		if err != nil {
			t.Fatal(err)
		}
		var res Response
		if n := testing.AllocsPerRun(100, func() {
			res.Reuse()
			z.Answer(&res, n, q.qtype, false)
		}); n != 0 {
			t.Errorf("%s %s: %g allocations an answer", q.name, dns.TypeToString[q.qtype], n)
		}
	}
}

// TestReusedResponseProvesWithoutGrowing: with Reuse, a signed zone's
// proofs (NSEC3 records and their signatures) are gathered in rooms the
// Response keeps, and the hashes of a name that does not exist are taken
// on the stack: NODATA and NXDOMAIN answers allocate nothing once the
// rooms have grown.
func TestReusedResponseProvesWithoutGrowing(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	z, err := ParseFile("../testdata/zones/nsec3.test.zone", "nsec3.test")
	if err != nil {
		t.Fatal(err)
	}
	questions := map[string]uint16{"big.nsec3.test.": dns.TypeMX, "nsec3.test.": dns.TypeSRV, "nothing.nsec3.test.": dns.TypeA}
	for name, qtype := range questions {
		n, err := NewName(name)
		if err != nil {
			t.Fatal(err)
		}
		var res Response
		res.Reuse()
		z.Answer(&res, n, qtype, true)
		if len(res.Ns) < 3 {
			t.Fatalf("%s %s: authority %v, want a SOA and a proof", name, dns.TypeToString[qtype], res.Ns)
		}
		if n := testing.AllocsPerRun(100, func() {
			res.Reuse()
			z.Answer(&res, n, qtype, true)
		}); n != 0 {
			t.Errorf("%s %s: %g allocations an answer", name, dns.TypeToString[qtype], n)
		}
	}
}
