package wire

import (
	"bytes"
	"testing"

	"github.com/miekg/dns"
)

// TestNSEC3sPackAsMiekg: NSEC3 records packed again and again by one
// encoder, some remembered, give the octets miekg/dns packs, and a record
// changed in place after it was packed (each of its fields in turn, its
// types' list among them) is packed as it is now, not as remembered.
func TestNSEC3sPackAsMiekg(t *testing.T) {
	rrs := []string{
		"2vptu5timamqttgl4luu9kg21e0aor3s.example.org. 300 IN NSEC3 1 1 12 aabbccdd 2vptu5timamqttgl4luu9kg21e0aor3t A RRSIG",
		"k8udemvp1j2f7eg6jebps17vp3n8i58h.example.org. 300 IN NSEC3 1 0 0 - kohar7mbb8dc2ce8a9qvl8hon4k53uhi TXT RRSIG TYPE65534",
		"0p9mhaveqvm6t7vbl5lop2u3t2rp3tom.example.org. 300 IN NSEC3 1 0 0 - 0p9mhaveqvm6t7vbl5lop2u3t2rp3ton",
	}
	e := NewEncoder()
	var recs []*dns.NSEC3
	for _, s := range rrs {
		recs = append(recs, mustRR(s).(*dns.NSEC3))
	}
	pack := func(rr *dns.NSEC3, what string) {
		t.Helper()
		m := new(dns.Msg)
		m.SetQuestion("x.example.org.", dns.TypeA)
		m.Response = true
		m.Ns = []dns.RR{rr}
		m.Compress = true // as the encoder packs
		want, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		got, err := e.Encode(nil, m, dns.MaxMsgSize)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%s: packed\n%x, want\n%x", what, got, want)
		}
		// Len is counted where compression is not asked for (miekg/dns's
		// Len then counts every name whole).
		m.Compress = false
		got, err = e.Encode(nil, m, dns.MaxMsgSize)
		if err != nil {
			t.Fatal(err)
		}
		if err := countedAsMsgLen(e, m, got); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	for round := range 3 {
		for _, rr := range recs {
			pack(rr, rr.String())
		}
		if round == 0 {
			for _, rr := range recs {
				if e.n3.find(rr) == nil {
					t.Fatalf("%s not remembered: the test tests nothing", rr)
				}
			}
		}
	}
	rr := recs[0]
	changes := []struct {
		what   string
		change func()
	}{
		{"a type added in place", func() { rr.TypeBitMap = append(rr.TypeBitMap[:1], dns.TypeRRSIG, dns.TypeNSEC3PARAM) }},
		{"a type changed in place", func() { rr.TypeBitMap[0] = dns.TypeAAAA }},
		{"the next owner", func() { rr.NextDomain = "2VPTU5TIMAMQTTGL4LUU9KG21E0AOR3U" }},
		{"the salt", func() { rr.Salt, rr.SaltLength = "aabbccee", 4 }},
		{"the iterations", func() { rr.Iterations = 13 }},
		{"the flags", func() { rr.Flags = 0 }},
		{"no salt", func() { rr.Salt, rr.SaltLength = "-", 0 }},
	}
	for _, c := range changes {
		pack(rr, c.what+", before") // remembered as it is
		c.change()
		pack(rr, c.what)
	}
}
