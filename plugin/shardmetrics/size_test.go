package shardmetrics

import (
	"net"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestRequestLenIsLen holds requestLen to Msg.Len on queries of every
// shape: names long, short, the root, not fully qualified, with escapes;
// with and without EDNS, with options; with compression on and off; more
// than one question, records in other sections, a TSIG record.
func TestRequestLenIsLen(t *testing.T) {
	var msgs []*dns.Msg
	for _, name := range []string{"www.example.org.", "a.", ".", "", "example.org", `a\.b.example.`, `\065bc.example.`,
		"a-very-long-label-of-sixty-three-octets-aaaaaaaaaaaaaaaaaaaaaaaaa.example.org."} {
		for _, edns := range []int{0, 1, 2, 3, 4, 5, 6} {
			for _, compress := range []bool{false, true} {
				m := new(dns.Msg).SetQuestion(name, dns.TypeA)
				m.Compress = compress
				if edns > 0 {
					m.SetEdns0(1232, edns > 1)
				}
				o := m.IsEdns0()
				switch edns {
				case 3:
					o.Option = append(o.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"},
						&dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IPv4(192, 0, 2, 0)})
				case 4: // a client cookie alone, as resolvers send it
					o.Option = append(o.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"})
				case 5: // with a server cookie, in capitals
					o.Option = append(o.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708A1B2C3D4E5F60718"})
				case 6: // text that is no hex, or no whole octets: pack fails, and measures nothing
					o.Option = append(o.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "01020304050607zz"},
						&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "010"})
				}
				msgs = append(msgs, m)
			}
		}
	}
	two := new(dns.Msg).SetQuestion("www.example.org.", dns.TypeA)
	two.Question = append(two.Question, dns.Question{Name: "mail.example.org.", Qtype: dns.TypeMX, Qclass: dns.ClassINET})
	two.Compress = true
	withAnswer := new(dns.Msg).SetQuestion("www.example.org.", dns.TypeA)
	withAnswer.Answer = append(withAnswer.Answer, &dns.A{Hdr: dns.RR_Header{Name: "www.example.org.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: net.IPv4(192, 0, 2, 1)})
	withAnswer.Compress = true
	tsig := new(dns.Msg).SetQuestion("www.example.org.", dns.TypeA)
	tsig.SetTsig("key.example.org.", dns.HmacSHA256, 300, 0)
	tsig.Compress = true
	msgs = append(msgs, two, withAnswer, tsig, new(dns.Msg))

	for _, m := range msgs {
		if got, want := requestLenOf(m), m.Len(); got != want {
			t.Errorf("%v: requestLen %d, Len %d", m.Question, got, want)
		}
	}
}

// FuzzRequestLen holds requestLen to Msg.Len on whatever miekg/dns
// unpacks from the fuzzer's octets.
func FuzzRequestLen(f *testing.F) {
	for _, m := range []*dns.Msg{
		new(dns.Msg).SetQuestion("www.example.org.", dns.TypeA),
		new(dns.Msg).SetQuestion(`a\.b.example.`, dns.TypeTXT).SetEdns0(1232, true),
	} {
		b, err := m.Pack()
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		m := new(dns.Msg)
		if m.Unpack(b) != nil {
			return
		}
		if got, want := requestLenOf(m), m.Len(); got != want {
			t.Fatalf("%v: requestLen %d, Len %d", m.Question, got, want)
		}
	})
}

// requestLenOf is requestLen as the handler calls it.
func requestLenOf(m *dns.Msg) int {
	return requestLen(m, len(m.Question) == 0 || !strings.Contains(m.Question[0].Name, `\`))
}
