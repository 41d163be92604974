package fastpack

import (
	"context"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"
)

// expireOf is an ExpireAnswerer for one zone.
type expireOf struct {
	zone string
	left uint32
}

func (e expireOf) ExpireFor(zone string) (uint32, bool) { return e.left, zone == e.zone }

// expireIn returns the EXPIRE options of m's OPT record.
func expireIn(m *dns.Msg) []uint32 {
	var got []uint32
	if o := m.IsEdns0(); o != nil {
		for _, e := range o.Option {
			if x, ok := e.(*dns.EDNS0_EXPIRE); ok {
				got = append(got, x.Expire)
			}
		}
	}
	return got
}

// TestTransferCarriesExpire: each message of a transfer that asked for
// EXPIRE, written by a plugin that knows nothing of it (the stock
// transfer plugin), carries the block's answerer's EXPIRE: in an OPT
// record of its own, before a TSIG record where the message is signed,
// or in a copy of the OPT record a writer between (the stock tsig
// plugin's) put there, the original untouched. A query that is not a
// transfer, a transfer that did not ask, and a zone the answerer does not
// serve get nothing.
func TestTransferCarriesExpire(t *testing.T) {
	f := Fastpack{expire: &expirer{answerer: expireOf{zone: "example.org.", left: 3600}}}
	request := func(qtype uint16, zone string, ask bool) *dns.Msg {
		r := new(dns.Msg)
		r.SetQuestion(zone, qtype)
		r.SetEdns0(1232, false)
		if ask {
			r.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_EXPIRE{Code: dns.EDNS0EXPIRE, Empty: true}}
		}
		return r
	}
	// write has f's writer write the message made by message for r, and
	// returns what reached the socket.
	write := func(r *dns.Msg, message func(r *dns.Msg) *dns.Msg) *dns.Msg {
		t.Helper()
		c := &capture{}
		f.Next = plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
			return 0, w.WriteMsg(message(r))
		})
		if _, err := f.ServeDNS(context.Background(), c, r); err != nil {
			t.Fatal(err)
		}
		m := new(dns.Msg)
		if err := m.Unpack(c.out); err != nil {
			t.Fatal(err)
		}
		return m
	}
	plain := func(r *dns.Msg) *dns.Msg {
		m := new(dns.Msg)
		m.SetReply(r)
		m.Answer = []dns.RR{&dns.SOA{Hdr: dns.RR_Header{Name: "example.org.", Rrtype: dns.TypeSOA, Class: dns.ClassINET}, Ns: "ns.example.org.", Mbox: "h.example.org."}}
		return m
	}
	for _, qtype := range []uint16{dns.TypeAXFR, dns.TypeIXFR} {
		if got := expireIn(write(request(qtype, "example.org.", true), plain)); len(got) != 1 || got[0] != 3600 {
			t.Fatalf("%s asking for EXPIRE: %v, want [3600]", dns.TypeToString[qtype], got)
		}
	}
	for what, r := range map[string]*dns.Msg{
		"a query not a transfer": request(dns.TypeSOA, "example.org.", true),
		"a transfer not asking":  request(dns.TypeAXFR, "example.org.", false),
		"another zone":           request(dns.TypeAXFR, "example.net.", true),
	} {
		if got := expireIn(write(r, plain)); len(got) != 0 {
			t.Fatalf("%s: EXPIRE %v, want none", what, got)
		}
	}

	// Signed: the OPT record before the TSIG record, which stays last.
	signed := func(r *dns.Msg) *dns.Msg {
		m := plain(r)
		m.SetTsig("key.", dns.HmacSHA256, 300, 0)
		return m
	}
	c := &capture{}
	f.Next = plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		m := signed(r)
		if err := w.WriteMsg(m); err != nil {
			return 0, err
		}
		if n := len(m.Extra); n != 2 || m.Extra[0].Header().Rrtype != dns.TypeOPT || m.Extra[1].Header().Rrtype != dns.TypeTSIG {
			t.Errorf("a signed message's additional section: %v, want the OPT record, then the TSIG record", m.Extra)
		}
		return 0, nil
	})
	f.ServeDNS(context.Background(), c, request(dns.TypeAXFR, "example.org.", true))

	// An OPT record a writer between put there: a copy carries the EXPIRE.
	var theirs *dns.OPT
	withOPT := func(r *dns.Msg) *dns.Msg {
		m := plain(r)
		m.SetEdns0(4096, false)
		theirs = m.IsEdns0()
		return m
	}
	if got := expireIn(write(request(dns.TypeAXFR, "example.org.", true), withOPT)); len(got) != 1 || got[0] != 3600 {
		t.Fatalf("a message with an OPT record of its own: EXPIRE %v, want [3600]", got)
	}
	if len(theirs.Option) != 0 {
		t.Fatalf("the writer's OPT record was changed: %v", theirs.Option)
	}
}
