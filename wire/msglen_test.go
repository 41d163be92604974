package wire

import (
	"testing"

	"github.com/miekg/dns"
)

// TestLenIsMsgLen: the encoder's count is Msg.Len for the types miekg/dns
// counts otherwise than it packs, spelled with escapes where they can
// be, and for names with escapes; a message that asks for compression,
// and one truncated, are not counted. (Every message of the parity tests
// is checked the same way: countedAsMsgLen.)
func TestLenIsMsgLen(t *testing.T) {
	records := []string{
		`www.example.org. 300 IN TXT "plain" "with \"quotes\" and \\ and \012 and \255"`,
		`www.example.org. 300 IN SPF "v=spf1 \065 -all"`,
		`www.example.org. 300 IN HINFO "PC\032Intel" "Linux\"x"`,
		`www.example.org. 300 IN CAA 0 issue "ca.example.net; a=\"b\""`,
		`www.example.org. 300 IN NAPTR 100 10 "U" "E2U+sip" "!^.*$!sip:info@example.org!" .`,
		`www.example.org. 300 IN NAPTR 100 10 "S" "SIP+D2U" "" _sip._udp.example.org.`,
		`www.example.org. 300 IN RRSIG A 13 3 300 20270101000000 20261201000000 12345 example.org. ` +
			`oJB1W6WNGv+ldvQ3WDG0MQkg5IEhjRip8WTrPYGv07h108dUKGMeDPKijVCHX3DDKdfb+v6oB9wfuh3DTJXUAg==`,
		`www.example.org. 300 IN RRSIG A 8 3 300 20270101000000 20261201000000 12345 example.org. AwEAAb8=`,
		`example.org. 300 IN DNSKEY 257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==`,
		`example.org. 300 IN CDNSKEY 257 3 13 mdsswUyr3DPW132mOi8V9xESWE8jTo0dxCjjnopKl+GqJxpVXckHAeF+KkxLbxILfDLUT0rAK9iUzy1L53eKGQ==`,
		`www.example.org. 300 IN NSEC zzz.example.org. A RRSIG NSEC TYPE1234`,
		`www.example.org. 300 IN NSEC zzz.example.org.`,
		`2vptu5timamqttgl4luu9kg21e0aor3s.example.org. 300 IN NSEC3 1 1 12 aabbccdd 2vptu5timamqttgl4luu9kg21e0aor3t A RRSIG`,
		`2vptu5timamqttgl4luu9kg21e0aor3s.example.org. 300 IN NSEC3 1 0 0 - 2vptu5timamqttgl4luu9kg21e0aor3t`,
		`www.example.org. 300 IN HTTPS 1 . alpn=h2,h3 port=443 ipv4hint=192.0.2.1`,
		`www.example.org. 300 IN SVCB 1 svc.example.org. mandatory=alpn alpn=h2`,
		`a\.b\032c.example.org. 300 IN CNAME x\\y.example.org.`,
		`www.example.org. 300 IN MX 10 mail\046x.example.org.`,
		`www.example.org. 300 IN URI 10 1 "https://example.org/"`, // through miekg/dns
	}
	e := NewEncoder()
	for _, s := range records {
		rr := mustRR(s)
		m := withReply(rr.Header().Name, rr.Header().Rrtype, []dns.RR{rr, dns.Copy(rr)}, nil, rrs("example.org. 300 IN A 192.0.2.1"))
		m.SetEdns0(1232, true)
		b, err := e.Encode(nil, m, dns.MaxMsgSize)
		if err != nil {
			t.Fatalf("%s: %v", s, err)
		}
		if e.Len != m.Len() {
			t.Errorf("%s: Len %d, Msg.Len %d", s, e.Len, m.Len())
		}
		if err := countedAsMsgLen(e, m, b); err != nil {
			t.Errorf("%s: %v", s, err)
		}
	}

	m := withReply("www.example.org.", dns.TypeTXT, rrs(records[0]), nil, nil)
	m.Compress = true
	if _, err := e.Encode(nil, m, dns.MaxMsgSize); err != nil || e.Len != -1 {
		t.Errorf("a message asking for compression: Len %d (%v), want none", e.Len, err)
	}
	m.Compress = false
	for range 40 {
		m.Answer = append(m.Answer, mustRR(`www.example.org. 300 IN TXT "twenty octets of txt"`))
	}
	if _, err := e.Encode(nil, m, 512); err != nil || e.Len != -1 {
		t.Errorf("a truncated message: Len %d (%v), want none", e.Len, err)
	}
}
