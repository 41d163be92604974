package test

import (
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/rrl"
)

// burst sends one query for each name from a socket bound to from, all at
// once, and counts the answers: full ones and truncated ones (TC, no
// records). The rest were dropped.
func burst(t *testing.T, from, to string, names []string, qtype uint16) (full, tc int) {
	t.Helper()
	msgs := make([]*dns.Msg, len(names))
	for i, n := range names {
		msgs[i] = new(dns.Msg)
		msgs[i].SetQuestion(n, qtype)
		msgs[i].Id = uint16(i + 1)
	}
	for _, m := range exchangeFrom(t, from, to, msgs) {
		switch {
		case m.Truncated && len(m.Answer)+len(m.Ns) == 0:
			tc++
		case m.Truncated:
			t.Fatalf("a truncated answer with records: %v", m)
		default:
			full++
		}
	}
	return full, tc
}

func repeat(name string, n int) []string {
	s := make([]string, n)
	for i := range s {
		s[i] = name
	}
	return s
}

// TestRRLFloodFromManySources: a flood of one answer from one client
// network is limited to the rate, every second limited answer sent
// truncated (slip 2) and the rest dropped, counted in codel's drops; a
// second network is answered meanwhile; random names under the zone from a
// third are limited as one (NXDOMAIN is keyed by zone); an exempt network
// is never limited; TCP from the flooding network is answered in full.
func TestRRLFloodFromManySources(t *testing.T) {
	s, prom := startWWW(t, "    codel\n    rrl {\n        rate 10\n        exempt 127.0.9.0/24\n    }\n")
	server := "dns://" + s.addr
	drops := func() float64 {
		return metric(t, prom, `coredns_codel_drops_total{reason="ratelimit",server="`+server+`"}`)
	}
	before := drops()

	full, tc := burst(t, "127.0.5.1", s.addr, repeat("www.example.org.", 100), dns.TypeA)
	t.Logf("one network, 100 queries for one name: %d answered, %d truncated", full, tc)
	if full < 10 || full > 15 {
		t.Errorf("%d full answers at rate 10, want about 10", full)
	}
	if dropped := 100 - full - tc; tc < dropped-2 || tc > dropped+2 {
		t.Errorf("%d truncated and %d dropped: slip 2 truncates every second limited answer", tc, dropped)
	}
	if got := drops() - before; got != float64(100-full-tc) {
		t.Errorf("codel counted %v rate-limited drops, want %d", got, 100-full-tc)
	}
	if got := metric(t, prom, `coredns_rrl_limited_total{action="slip",server="`+server+`"}`); got != float64(tc) {
		t.Errorf("coredns_rrl_limited_total{action=slip} = %v, want %d", got, tc)
	}

	if full, _ := burst(t, "127.0.6.1", s.addr, repeat("www.example.org.", 10), dns.TypeA); full != 10 {
		t.Errorf("another network: %d of 10 answered", full)
	}

	var random []string
	for i := range 100 {
		random = append(random, fmt.Sprintf("r%d.example.org.", i))
	}
	if full, tc := burst(t, "127.0.7.1", s.addr, random, dns.TypeA); full > 15 || tc == 0 {
		t.Errorf("100 random names under the zone: %d answered in full, %d truncated; want them limited as one", full, tc)
	}

	if full, _ := burst(t, "127.0.9.1", s.addr, repeat("www.example.org.", 100), dns.TypeA); full != 100 {
		t.Errorf("exempt network: %d of 100 answered", full)
	}

	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP("127.0.5.1")}}
	conn, err := d.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dc := &dns.Conn{Conn: conn}
	for range 20 {
		m := new(dns.Msg)
		m.SetQuestion("www.example.org.", dns.TypeA)
		dc.WriteMsg(m)
		r, err := dc.ReadMsg()
		if err != nil || r.Truncated || len(r.Answer) != 1 {
			t.Fatalf("over TCP from the limited network: %v %v", err, r)
		}
	}
}

// exchangeFrom sends each message from a socket bound to from, all at
// once, and returns the answers that came back, by ID.
func exchangeFrom(t *testing.T, from, to string, msgs []*dns.Msg) map[uint16]*dns.Msg {
	t.Helper()
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.ParseIP(from)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dst, _ := net.ResolveUDPAddr("udp", to)
	for _, m := range msgs {
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.WriteToUDP(b, dst); err != nil {
			t.Fatal(err)
		}
	}
	got := map[uint16]*dns.Msg{}
	buf := make([]byte, 4096)
	for {
		c.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
		n, err := c.Read(buf)
		if err != nil {
			return got
		}
		m := new(dns.Msg)
		if err := m.Unpack(buf[:n]); err != nil {
			t.Fatalf("an answer that does not unpack: %v", err)
		}
		got[m.Id] = m
	}
}

// withCookie is a query for www.example.org A with a COOKIE option.
func withCookie(id uint16, cookie string) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	m.Id = id
	m.SetEdns0(1232, false)
	m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: cookie})
	return m
}

func cookieIn(m *dns.Msg) string {
	if opt := m.IsEdns0(); opt != nil {
		for _, o := range opt.Option {
			if c, ok := o.(*dns.EDNS0_COOKIE); ok {
				return c.Cookie
			}
		}
	}
	return ""
}

// TestCookies: with rrl in the chain (and fastpack packing), a query with
// a client cookie gets it back with a server cookie in RFC 9018's layout
// under the configured secret; a client that returns it is never limited;
// a flood with a client cookie alone is answered BADCOOKIE past the rate,
// with a cookie, instead of being dropped; a COOKIE option of no cookie's
// length is FORMERR; over TCP the cookie comes back too.
func TestCookies(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	const secret = "e5e973e5a6b2a43f48e7dc849e37bfcf"
	s := startCoreDNS(t, fmt.Sprintf("    fastpack\n    codel\n    rrl {\n        rate 10\n        cookie-secret %s\n    }\n    zonestore %s example.org\n", secret, zf), "example.org")
	const client = "0102030405060708"
	sk, _ := hex.DecodeString(secret)
	cookies := rrl.NewCookies(sk)
	ck, _ := hex.DecodeString(client)

	first := exchangeFrom(t, "127.0.11.1", s.addr, []*dns.Msg{withCookie(1, client)})[1]
	if first == nil || len(first.Answer) != 1 {
		t.Fatalf("a query with a client cookie: %v", first)
	}
	got := cookieIn(first)
	raw, _ := hex.DecodeString(got)
	if len(raw) != 24 || got[:16] != client || !cookies.Valid(ck, raw[8:], netip.MustParseAddr("127.0.11.1")) {
		t.Fatalf("cookie %q: want the client's and a valid 16-octet server cookie", got)
	}

	var valid []*dns.Msg
	for i := range 100 {
		valid = append(valid, withCookie(uint16(i+1), got))
	}
	answers := exchangeFrom(t, "127.0.11.1", s.addr, valid)
	full := 0
	for _, m := range answers {
		if m.Rcode == dns.RcodeSuccess && len(m.Answer) == 1 && !m.Truncated {
			full++
		}
	}
	if full != 100 {
		t.Errorf("100 queries with a valid server cookie at rate 10: %d answered in full, want all", full)
	}

	var clientOnly []*dns.Msg
	for i := range 100 {
		clientOnly = append(clientOnly, withCookie(uint16(i+1), client))
	}
	answers = exchangeFrom(t, "127.0.12.1", s.addr, clientOnly)
	bad, full := 0, 0
	for _, m := range answers {
		switch {
		case m.Rcode == dns.RcodeBadCookie && len(m.Answer) == 0 && len(cookieIn(m)) == 48:
			bad++
		case m.Rcode == dns.RcodeSuccess && len(m.Answer) == 1:
			full++
		}
	}
	t.Logf("100 queries with a client cookie only: %d answered, %d BADCOOKIE, %d missing", full, bad, 100-len(answers))
	if len(answers) != 100 || full < 10 || full > 15 || bad != 100-full {
		t.Errorf("%d answers: %d in full and %d BADCOOKIE; want every one answered, past the rate with BADCOOKIE", len(answers), full, bad)
	}

	if m := exchangeFrom(t, "127.0.13.1", s.addr, []*dns.Msg{withCookie(7, "0102030405")})[7]; m == nil || m.Rcode != dns.RcodeFormatError {
		t.Errorf("a 5-octet COOKIE: %v, want FORMERR", m)
	}

	c := &dns.Client{Net: "tcp", Timeout: 2 * time.Second}
	r, _, err := c.Exchange(withCookie(9, client), s.addr)
	if err != nil || len(r.Answer) != 1 || len(cookieIn(r)) != 48 {
		t.Fatalf("over TCP: %v %v", err, r)
	}
}

// cookieRequest is a request for a server cookie (RFC 7873 section 5.4): a
// query of no question, with RD, and a COOKIE option.
func cookieRequest(id uint16, cookie string) *dns.Msg {
	m := withCookie(id, cookie)
	m.Question = nil
	return m
}

// TestCookieWithoutQuestion: a query of no question with a COOKIE option
// asks for a server cookie (RFC 7873 section 5.4). With rrl, through
// codel's reader and its TCP listeners, it is answered NOERROR with no
// records, the client cookie and a server cookie valid for the client's
// address, which a query then returns and is not limited; BADCOOKIE with
// a fresh one where it returned a server cookie not valid; FORMERR where
// the option has no cookie's length, or there is no COOKIE option. Without
// rrl the server has no cookies, and answers FORMERR (with its OPT).
func TestCookieWithoutQuestion(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	const secret = "e5e973e5a6b2a43f48e7dc849e37bfcf"
	s := startCoreDNS(t, fmt.Sprintf("    codel\n    rrl {\n        rate 10\n        cookie-secret %s\n    }\n    zonestore %s example.org\n", secret, zf), "example.org")
	plain := startCoreDNS(t, fmt.Sprintf("    codel\n    zonestore %s example.org\n", zf), "example.org")
	sk, _ := hex.DecodeString(secret)
	cookies := rrl.NewCookies(sk)
	const client = "0102030405060708"
	ck, _ := hex.DecodeString(client)
	from := netip.MustParseAddr("127.0.14.1")

	// cookieAnswer checks m is an answer to request id of rcode with the
	// client cookie and a server cookie valid for addr, and returns the
	// cookie.
	cookieAnswer := func(what string, m *dns.Msg, id uint16, rcode int, addr netip.Addr) string {
		t.Helper()
		if m == nil {
			t.Fatalf("%s: no answer", what)
		}
		got := cookieIn(m)
		raw, _ := hex.DecodeString(got)
		if m.Id != id || !m.Response || !m.RecursionDesired || m.Rcode != rcode || len(m.Question)+len(m.Answer)+len(m.Ns) != 0 ||
			len(raw) != 24 || got[:16] != client || !cookies.Valid(ck, raw[8:], addr) {
			t.Fatalf("%s: %v\nwant %s, no records, the client cookie and a valid server cookie", what, m, dns.RcodeToString[rcode])
		}
		return got
	}
	one := func(srv string, m *dns.Msg) *dns.Msg {
		return exchangeFrom(t, from.String(), srv, []*dns.Msg{m})[m.Id]
	}

	got := cookieAnswer("a client cookie alone", one(s.addr, cookieRequest(1, client)), 1, dns.RcodeSuccess, from)
	var valid []*dns.Msg
	for i := range 50 {
		valid = append(valid, withCookie(uint16(i+1), got))
	}
	full := 0
	for _, m := range exchangeFrom(t, from.String(), s.addr, valid) {
		if m.Rcode == dns.RcodeSuccess && len(m.Answer) == 1 && !m.Truncated {
			full++
		}
	}
	if full != 50 {
		t.Errorf("50 queries with the server cookie so learnt, at rate 10: %d answered in full, want all", full)
	}
	cookieAnswer("the cookie returned", one(s.addr, cookieRequest(2, got)), 2, dns.RcodeSuccess, from)
	cookieAnswer("a server cookie not valid", one(s.addr, cookieRequest(3, client+"01000000aabbccdd0011223344556677")), 3, dns.RcodeBadCookie, from)

	for _, tc := range []struct {
		name string
		m    *dns.Msg
	}{
		{"a 5-octet COOKIE", cookieRequest(4, "0102030405")},
		{"no COOKIE option", func() *dns.Msg { m := cookieRequest(5, client); m.IsEdns0().Option = nil; return m }()},
	} {
		if m := one(s.addr, tc.m); m == nil || m.Rcode != dns.RcodeFormatError || m.IsEdns0() == nil || cookieIn(m) != "" {
			t.Errorf("%s: %v, want FORMERR with an OPT record and no cookie", tc.name, m)
		}
	}
	if m := one(plain.addr, cookieRequest(6, client)); m == nil || m.Rcode != dns.RcodeFormatError || m.IsEdns0() == nil || cookieIn(m) != "" {
		t.Errorf("without rrl: %v, want FORMERR with an OPT record and no cookie", m)
	}

	r, err := exchange(t, s.addr, cookieRequest(7, client), true)
	if err != nil {
		t.Fatalf("over TCP: %v", err)
	}
	cookieAnswer("over TCP", r, 7, dns.RcodeSuccess, netip.MustParseAddr("127.0.0.1"))
}
