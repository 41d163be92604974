package zonestore

import (
	"testing"

	"github.com/miekg/dns"
)

const shareZone = head + `www A 192.0.2.1
www A 192.0.2.2
www A 192.0.2.3
sub NS ns.sub
ns.sub A 192.0.2.9
alias DNAME www.example.org.
`

// answerText is the whole response as text, for comparing answers before
// and after.
func answerText(z *Zone, qname string, qtype uint16) string {
	res := z.Lookup(qname, qtype, false)
	m := new(dns.Msg)
	m.Answer, m.Ns, m.Extra = res.Answer, res.Ns, res.Extra
	m.Rcode = res.Rcode
	return m.String()
}

// TestSharedSectionsLeaveTheZoneAlone: answers take the zone's own slices
// for their answer and authority sections; what a server does to a
// response afterwards (append signatures, Truncate with its OPT record
// appended after what it kept, the next query reusing the Response) never
// changes what the zone answers.
func TestSharedSectionsLeaveTheZoneAlone(t *testing.T) {
	z, err := parse(t, shareZone)
	if err != nil {
		t.Fatal(err)
	}
	queries := []struct {
		name  string
		qtype uint16
	}{
		{"www.example.org.", dns.TypeA},
		{"nx.example.org.", dns.TypeA},        // the SOA alone in authority
		{"www.example.org.", dns.TypeTXT},     // NODATA
		{"x.sub.example.org.", dns.TypeA},     // referral: NS in authority
		{"www.alias.example.org.", dns.TypeA}, // a synthesized CNAME, then the A set
	}
	want := map[int]string{}
	for i, q := range queries {
		want[i] = answerText(z, q.name, q.qtype)
	}

	www := z.Lookup("www.example.org.", dns.TypeA, false)
	if len(www.Answer) != 3 || cap(www.Answer) != 3 {
		t.Fatalf("answer %v, capacity %d: want the zone's three records, capacity cut", www.Answer, cap(www.Answer))
	}
	if &www.Answer[0] != &z.node(mustKey(t, "www.example.org.")).get(dns.TypeA).rrs[0] {
		t.Error("the answer section is a copy, not the zone's slice")
	}

	var res Response
	opt := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
	opt.SetUDPSize(512)
	for round := 0; round < 3; round++ {
		for i, q := range queries {
			res.Answer, res.Ns, res.Extra = res.Answer[:0], res.Ns[:0], res.Extra[:0]
			z.LookupInto(&res, q.name, q.qtype, false)
			m := new(dns.Msg)
			m.SetQuestion(q.name, q.qtype)
			m.Answer, m.Ns, m.Extra = res.Answer, res.Ns, res.Extra
			m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: q.name, Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{"appended"}})
			m.Ns = append(m.Ns, &dns.TXT{Hdr: dns.RR_Header{Name: q.name, Rrtype: dns.TypeTXT, Class: dns.ClassINET}, Txt: []string{"appended"}})
			m.Extra = append(m.Extra, opt)
			m.Truncate(40) // keeps less than it was given, then appends the OPT record again
			if got := answerText(z, q.name, q.qtype); got != want[i] {
				t.Fatalf("round %d, %s: the zone now answers\n%s\nwant\n%s", round, q.name, got, want[i])
			}
		}
	}
}

// TestAnswerAllocatesNothingForOneRRset: an exact answer, a NODATA and an
// NXDOMAIN take the zone's slices, with no allocation (the name prepared
// once, as the handler does); a referral allocates its additional section
// only.
func TestAnswerAllocatesNothingForOneRRset(t *testing.T) {
	z, err := parse(t, shareZone)
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []struct {
		name   string
		qtype  uint16
		allocs float64
	}{{"www.example.org.", dns.TypeA, 0}, {"www.example.org.", dns.TypeTXT, 0}, {"nx.example.org.", dns.TypeA, 0}, {"x.sub.example.org.", dns.TypeA, 1}} {
		n, err := NewName(q.name)
		if err != nil {
			t.Fatal(err)
		}
		res := new(Response)
		allocs := testing.AllocsPerRun(100, func() {
			*res = Response{}
			z.Answer(res, n, q.qtype, false)
		})
		if allocs != q.allocs {
			t.Errorf("%s %s: %.0f allocations, want %.0f", q.name, dns.TypeToString[q.qtype], allocs, q.allocs)
		}
	}
}

func mustKey(t *testing.T, name string) string {
	t.Helper()
	k, err := key(name)
	if err != nil {
		t.Fatal(err)
	}
	return k
}
