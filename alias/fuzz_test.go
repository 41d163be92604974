package alias

import (
	"testing"

	"github.com/miekg/dns"
)

// FuzzUpstreamAnswer: whatever an upstream sends back, checking it and
// taking its addresses never panics, and what is taken is of the type asked.
func FuzzUpstreamAnswer(f *testing.F) {
	q := new(dns.Msg)
	q.SetQuestion("cdn.example.", dns.TypeA)
	for _, answer := range [][]string{
		{"cdn.example. 60 A 192.0.2.7"},
		{"cdn.example. 40 CNAME edge.example.", "edge.example. 300 A 192.0.2.8"},
		{"cdn.example. 40 CNAME cdn.example."},
		{},
	} {
		m := new(dns.Msg)
		m.SetReply(q)
		for _, s := range answer {
			rr, _ := dns.NewRR(s)
			m.Answer = append(m.Answer, rr)
		}
		b, _ := m.Pack()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r := new(dns.Msg)
		if r.Unpack(b) != nil {
			return
		}
		r.Id = q.Id
		if valid(q, r, "fuzz") != nil {
			return
		}
		rrs, _ := addresses(r, "cdn.example.", dns.TypeA)
		for _, rr := range rrs {
			if _, ok := rr.(*dns.A); !ok {
				t.Fatalf("took %v for an A question", rr)
			}
		}
	})
}
