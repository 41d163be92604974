package rrl

import (
	"net/netip"
	"testing"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/rrl"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		ok   bool
		want rrl.Config
	}{
		{"rrl", true, rrl.Config{}},
		{"rrl {\n rate 50\n slip 3\n ipv4-prefix 22\n ipv6-prefix 48\n table 1024\n exempt 192.0.2.0/24 2001:db8::1\n}", true,
			rrl.Config{Rate: 50, Slip: 3, IPv4Prefix: 22, IPv6Prefix: 48, Buckets: 1024,
				Exempt: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24"), netip.MustParsePrefix("2001:db8::1/128")}}},
		{"rrl {\n slip 0\n}", true, rrl.Config{Slip: -1}},
		{"rrl {\n exempt 192.0.2.7/24\n}", true, rrl.Config{Exempt: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}}},
		{"rrl extra", false, rrl.Config{}},
		{"rrl {\n rate 0\n}", false, rrl.Config{}},
		{"rrl {\n rate many\n}", false, rrl.Config{}},
		{"rrl {\n slip -1\n}", false, rrl.Config{}},
		{"rrl {\n ipv4-prefix 33\n}", false, rrl.Config{}},
		{"rrl {\n ipv6-prefix 0\n}", false, rrl.Config{}},
		{"rrl {\n exempt\n}", false, rrl.Config{}},
		{"rrl {\n exempt somewhere\n}", false, rrl.Config{}},
		{"rrl {\n burst 5\n}", false, rrl.Config{}},
		{"rrl\nrrl", false, rrl.Config{}},
		{"rrl {\n cookie-secret e5e973e5a6b2a43f48e7dc849e37bfcf\n}", true, rrl.Config{}},
		{"rrl {\n cookie-secret e5e973\n}", false, rrl.Config{}},
		{"rrl {\n cookie-secret secret\n}", false, rrl.Config{}},
	} {
		got, err := parse(caddy.NewTestController("dns", c.in))
		if (err == nil) != c.ok {
			t.Errorf("%q: error %v, want ok %v", c.in, err, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		if got.Rate != c.want.Rate || got.Slip != c.want.Slip || got.IPv4Prefix != c.want.IPv4Prefix ||
			got.IPv6Prefix != c.want.IPv6Prefix || got.Buckets != c.want.Buckets || len(got.Exempt) != len(c.want.Exempt) {
			t.Errorf("%q: %+v, want %+v", c.in, got, c.want)
			continue
		}
		for i := range got.Exempt {
			if got.Exempt[i] != c.want.Exempt[i] {
				t.Errorf("%q: exempt %v, want %v", c.in, got.Exempt, c.want.Exempt)
			}
		}
	}
}

func TestClassify(t *testing.T) {
	soa, _ := dns.NewRR("Example.org. 300 IN SOA ns1.example.org. h.example.org. 1 2 3 4 5")
	ns, _ := dns.NewRR("sub.example.org. 300 IN NS ns.sub.example.org.")
	a, _ := dns.NewRR("www.example.org. 300 IN A 192.0.2.1")
	msg := func(rcode int, answer, authority []dns.RR) *dns.Msg {
		m := new(dns.Msg)
		m.SetQuestion("WWW.example.org.", dns.TypeA)
		m.Rcode, m.Answer, m.Ns = rcode, answer, authority
		return m
	}
	for _, c := range []struct {
		m    *dns.Msg
		kind rrl.Kind
		name string
	}{
		{msg(dns.RcodeSuccess, []dns.RR{a}, nil), rrl.Answer, "www.example.org."},
		{msg(dns.RcodeNameError, nil, []dns.RR{soa}), rrl.NXDomain, "example.org."},
		{msg(dns.RcodeSuccess, nil, []dns.RR{soa}), rrl.NoData, "example.org."},
		{msg(dns.RcodeSuccess, nil, []dns.RR{ns}), rrl.Referral, "sub.example.org."},
		{msg(dns.RcodeServerFailure, nil, nil), rrl.Error, ""},
		{msg(dns.RcodeRefused, nil, nil), rrl.Error, ""},
	} {
		if kind, name, _ := classify(c.m); kind != c.kind || name != c.name {
			t.Errorf("%s with %d answers and %v: %v %q, want %v %q", dns.RcodeToString[c.m.Rcode], len(c.m.Answer), c.m.Ns, kind, name, c.kind, c.name)
		}
	}
}

func TestTruncatedKeepsOnlyTheOPT(t *testing.T) {
	a, _ := dns.NewRR("www.example.org. 300 IN A 192.0.2.1")
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	m.Response, m.Authoritative = true, true
	m.Answer = []dns.RR{a}
	m.SetEdns0(1232, true)
	tr := truncated(m)
	if !tr.Truncated || !tr.Authoritative || tr.Id != m.Id || len(tr.Answer) != 0 || len(tr.Ns) != 0 ||
		len(tr.Extra) != 1 || tr.IsEdns0() == nil || !tr.IsEdns0().Do() || len(tr.Question) != 1 {
		t.Fatalf("truncated: %v", tr)
	}
}
