package secondary

import (
	"net"
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
		m.Answer = rrs(f, texts...)
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

// FuzzTransferIn: whatever octets a primary sends on a transfer's
// connection (lengths, messages, signatures or none), xfrIn reads them
// without a panic, and ends with an error or the transfer's end; with a
// key, no unsigned message is taken.
func FuzzTransferIn(f *testing.F) {
	frame := func(msgs ...*dns.Msg) []byte {
		var out []byte
		for _, m := range msgs {
			b, err := m.Pack()
			if err != nil {
				f.Fatal(err)
			}
			out = append(out, byte(len(b)>>8), byte(len(b)))
			out = append(out, b...)
		}
		return out
	}
	answer := func(texts ...string) *dns.Msg {
		m := new(dns.Msg)
		m.Id = 1
		m.Response = true
		m.SetQuestion("example.test.", dns.TypeAXFR)
		m.Answer = rrs(f, texts...)
		return m
	}
	f.Add(frame(answer(soa("2"), "www.example.test. 300 A 192.0.2.1", soa("2"))), false, false)
	f.Add(frame(answer(soa("2")), answer("www.example.test. 300 A 192.0.2.1"), answer(soa("2"))), false, false)
	f.Add(frame(answer(soa("2"), soa("1"), soa("2"), "www.example.test. 300 A 192.0.2.1", soa("2"))), true, false)
	f.Add(frame(answer(soa("1"))), true, true)
	f.Add([]byte{0, 1, 0}, false, true)
	f.Fuzz(func(t *testing.T, data []byte, ixfr, signed bool) {
		server, client := net.Pipe()
		defer client.Close()
		go func() { server.Write(data); server.Close() }()
		q := new(dns.Msg)
		q.Id = 1
		if ixfr {
			q.SetIxfr("example.test.", 1, "ns1.example.test.", "h.example.test.")
		} else {
			q.SetAxfr("example.test.")
		}
		q.Id = 1
		x := &xfrIn{conn: &dns.Conn{Conn: client}, buf: buffers.Get().(*[]byte), q: q}
		if signed {
			x.key = &TSIG{Name: "xfr.", Algorithm: dns.HmacSHA256, Secret: "c2VjcmV0"}
			x.mac = "00"
		}
		defer buffers.Put(x.buf)
		for range 1000 { // a message a turn: the octets run out first
			rrs, last, err := x.next()
			if err != nil || last {
				return
			}
			if signed && len(rrs) > 0 {
				t.Fatal("a message taken with a key, though no fuzzed message can carry its signature")
			}
		}
	})
}
