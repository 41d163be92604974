package secondary

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// FuzzTransfer: whatever a primary sends (the records of a message), taken
// as a whole zone or as an IXFR answer against a version held, never
// panics, and a version built from it is a valid zone of the right origin.
func FuzzTransfer(f *testing.F) {
	seed := func(texts ...string) {
		m := new(dns.Msg)
		m.SetQuestion("example.test.", dns.TypeIXFR)
		for _, s := range texts {
			rr, err := dns.NewRR(s)
			if err != nil {
				f.Fatal(err)
			}
			m.Answer = append(m.Answer, rr)
		}
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	ns, glue := "example.test. 300 NS ns1.example.test.", "ns1.example.test. 300 A 192.0.2.53"
	seed(soa("2"), ns, glue, "www.example.test. 300 A 192.0.2.1", soa("2"))
	seed(soa("2"), soa("1"), "www.example.test. 300 A 192.0.2.1", soa("2"), "www.example.test. 300 A 192.0.2.2", soa("2"))
	seed(soa("3"), soa("1"), soa("2"), soa("2"), soa("3"), soa("3"))
	seed(soa("1"))

	b, _ := zonestore.NewBuilder("example.test.", "")
	for _, s := range []string{soa("1"), ns, glue, "www.example.test. 300 A 192.0.2.1"} {
		rr, _ := dns.NewRR(s)
		b.Add(rr, 0)
	}
	cur, err := b.Build()
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		m := new(dns.Msg)
		if m.Unpack(data) != nil {
			return
		}
		if z, err := wholeZone("example.test.", m.Answer); err == nil && z.Origin() != "example.test." {
			t.Fatalf("built %q", z.Origin())
		}
		if z, _, err := applyIXFR(cur, m.Answer); err == nil && z != nil && z.SOA() == nil {
			t.Fatal("a version without its SOA")
		}
	})
}
