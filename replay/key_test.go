package replay

import (
	"bytes"
	"net"
	"testing"

	"github.com/miekg/dns"
)

func query(name string, qtype uint16) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	return m
}

// Every part of a request that its answer copies or depends on tells two
// keys apart, and so does the transport it came over; the ID and the
// flags an answer does not copy do not.
func TestKeyTellsRequestsApart(t *testing.T) {
	base := func() *dns.Msg {
		m := query("www.example.org.", dns.TypeA)
		m.SetEdns0(1232, false)
		return m
	}
	keyOf := func(m *dns.Msg) string {
		k, ok := Key(nil, m, false)
		if !ok {
			t.Fatalf("no key for %v", m)
		}
		return string(k)
	}
	want := keyOf(base())
	same := map[string]func(*dns.Msg){
		"another ID": func(m *dns.Msg) { m.Id++ },
		"AD set":     func(m *dns.Msg) { m.AuthenticatedData = true },
		"CD set":     func(m *dns.Msg) { m.CheckingDisabled = true }, // the answer clears it
	}
	for name, change := range same {
		m := base()
		change(m)
		if keyOf(m) != want {
			t.Errorf("%s: another key", name)
		}
	}
	apart := map[string]func(*dns.Msg){
		"the name's case":  func(m *dns.Msg) { m.Question[0].Name = "WWW.example.org." },
		"another name":     func(m *dns.Msg) { m.Question[0].Name = "ww.example.org." },
		"another type":     func(m *dns.Msg) { m.Question[0].Qtype = dns.TypeAAAA },
		"another class":    func(m *dns.Msg) { m.Question[0].Qclass = dns.ClassCHAOS },
		"RD":               func(m *dns.Msg) { m.RecursionDesired = !m.RecursionDesired },
		"no OPT":           func(m *dns.Msg) { m.Extra = nil },
		"another UDP size": func(m *dns.Msg) { m.IsEdns0().SetUDPSize(4096) },
		"DO":               func(m *dns.Msg) { m.IsEdns0().SetDo() },
		"EDNS version":     func(m *dns.Msg) { m.IsEdns0().SetVersion(1) },
	}
	seen := map[string]string{want: "the base"}
	for name, change := range apart {
		m := base()
		change(m)
		k := keyOf(m)
		if other, ok := seen[k]; ok {
			t.Errorf("%s: the key of %s", name, other)
		}
		seen[k] = name
	}
	// Over a stream (TCP): packed to 65,535 octets, never truncated.
	stream, _ := Key(nil, base(), true)
	if other, ok := seen[string(stream)]; ok {
		t.Errorf("over a stream: the key of %s", other)
	}
}

// A name and fields that run together otherwise (a name one octet
// longer, a type one octet shorter) do not make the same key.
func TestKeyIsReadFromItsEnd(t *testing.T) {
	a, _ := Key(nil, query("a.", 0x6200), false)
	b, _ := Key(nil, query("a.b", 0x0000), false)
	if bytes.Equal(a, b) {
		t.Fatal("two requests, one key")
	}
}

// A request whose answer may be the client's own is not given a key.
// TestKeyPassesACookieBy: a query with a COOKIE option, client cookie
// alone or with a server cookie, has the key of the same query without
// one: the answer does not depend on it.
func TestKeyPassesACookieBy(t *testing.T) {
	plain := query("www.example.org.", dns.TypeA)
	plain.SetEdns0(1232, true)
	want, ok := Key(nil, plain, false)
	if !ok {
		t.Fatal("no key for a plain query")
	}
	for _, cookie := range []string{"0102030405060708", "0102030405060708" + "1112131415161718191a1b1c1d1e1f20"} {
		m := plain.Copy()
		o := m.IsEdns0()
		o.Option = append(o.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: cookie})
		got, ok := Key(nil, m, false)
		if !ok || !bytes.Equal(got, want) {
			t.Errorf("cookie %s: key %q, %v; want the plain query's %q", cookie, got, ok, want)
		}
	}
}

func TestKeyRefusesWhatIsAnsweredPerClient(t *testing.T) {
	refused := map[string]func(*dns.Msg){
		"two questions": func(m *dns.Msg) { m.Question = append(m.Question, m.Question[0]) },
		"no question":   func(m *dns.Msg) { m.Question = nil },
		"an answer": func(m *dns.Msg) {
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "a.", Rrtype: dns.TypeA, Class: dns.ClassINET}}}
		},
		"an EDNS option": func(m *dns.Msg) {
			o := m.IsEdns0()
			o.Option = append(o.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IPv4(192, 0, 2, 0)})
		},
		"a cookie and another option": func(m *dns.Msg) {
			o := m.IsEdns0()
			o.Option = append(o.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"},
				&dns.EDNS0_PADDING{Padding: make([]byte, 8)})
		},
		"a TSIG": func(m *dns.Msg) { m.SetTsig("key.", dns.HmacSHA256, 300, 0) },
		"two OPT": func(m *dns.Msg) {
			m.Extra = append(m.Extra, m.Extra[0])
		},
	}
	for name, change := range refused {
		m := query("www.example.org.", dns.TypeA)
		m.SetEdns0(1232, true)
		change(m)
		if _, ok := Key(nil, m, false); ok {
			t.Errorf("%s: given a key", name)
		}
	}
}
