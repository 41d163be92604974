package test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// headerCase is a message few resolvers send: an opcode, a header bit, a
// class or a type a query seldom has, more or fewer records than a query
// holds, or octets that are no message. ontime answers it as Knot DNS
// does, or, where why says otherwise, as ours (and plain, where zonestore
// behind CoreDNS's own server answers otherwise than the full chain)
// says: each a rendering as headerAnswer writes it; over TCP too unless
// udp is set.
type headerCase struct {
	name  string
	pkt   []byte
	why   string
	ours  string
	plain string
	udp   bool
}

// headerAnswer renders an answer for comparison: the rcode, the opcode,
// the header's bits and counts, the OPT record's version and DO, the
// question, and the sections as sets (section), or "no answer" when none
// came (a UDP query dropped, a TCP connection closed or left silent).
func headerAnswer(b []byte, err error) string {
	if err != nil {
		return "no answer"
	}
	m := new(dns.Msg)
	if err := m.Unpack(b); err != nil {
		return fmt.Sprintf("unparsable (%v): % x", err, b)
	}
	bits := flags(m)
	if m.Zero {
		bits += " z"
	}
	s := fmt.Sprintf("rcode %d opcode %d [%s] qd %d an %d ns %d ar %d", m.Rcode, m.Opcode, bits,
		binary.BigEndian.Uint16(b[4:]), binary.BigEndian.Uint16(b[6:]), binary.BigEndian.Uint16(b[8:]), binary.BigEndian.Uint16(b[10:]))
	if o := m.IsEdns0(); o != nil {
		s += fmt.Sprintf(" edns %d do %v", o.Version(), o.Do())
	}
	for _, q := range m.Question {
		s += fmt.Sprintf(" q %s %d %d", strings.ToLower(q.Name), q.Qtype, q.Qclass)
	}
	for _, sec := range [][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range section(sec) {
			s += "\n  " + rr
		}
	}
	return s
}

// askRaw sends pkt over UDP (asked again up to twice where no answer
// came: a loaded machine may lose a datagram) or TCP, and returns the
// answer's octets.
func askRaw(addr string, pkt []byte, tcp bool) ([]byte, error) {
	if tcp {
		c, err := net.DialTimeout("tcp", addr, 3*time.Second)
		if err != nil {
			return nil, err
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(3 * time.Second)) // a server on a loaded machine, or none
		if _, err := c.Write(append(binary.BigEndian.AppendUint16(nil, uint16(len(pkt))), pkt...)); err != nil {
			return nil, err
		}
		var l [2]byte
		if _, err := io.ReadFull(c, l[:]); err != nil {
			return nil, err
		}
		b := make([]byte, binary.BigEndian.Uint16(l[:]))
		_, err = io.ReadFull(c, b)
		return b, err
	}
	c, err := net.Dial("udp", addr)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	b := make([]byte, 65535)
	for range 3 {
		c.SetDeadline(time.Now().Add(time.Second))
		if _, err := c.Write(pkt); err != nil {
			return nil, err
		}
		n, err := c.Read(b)
		if err == nil {
			return b[:n], nil
		}
	}
	return nil, errors.New("no answer")
}

// optRDATA replaces the RDATA of the OPT record that ends query (one
// with no option) with rdata.
func optRDATA(query []byte, rdata ...byte) []byte {
	b := append([]byte{}, query[:len(query)-2]...)
	b = binary.BigEndian.AppendUint16(b, uint16(len(rdata)))
	return append(b, rdata...)
}

// headerQuery packs a query for name, type qtype and class qclass, RD
// clear, changed by each of mods.
func headerQuery(t *testing.T, name string, qtype, qclass uint16, mods ...func(*dns.Msg)) []byte {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	m.Id = 0x4242
	m.Question[0].Qclass = qclass
	m.RecursionDesired = false
	for _, mod := range mods {
		mod(m)
	}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestHeadersAsKnot asks Knot DNS and ontime, zonestore behind CoreDNS's
// server and the full chain (prometheus, fastpack, codel,
// zonestore), the suite's zones, the cases below over UDP and TCP. Each
// server must answer as Knot does, or as the case says and why.
func TestHeadersAsKnot(t *testing.T) {
	zones := conformanceZones(t)
	knot := startKnot(t, zones)
	body, origins := zonestoreLines(zones, "")
	plain := startCoreDNS(t, body, origins...)
	full := startCoreDNS(t, fmt.Sprintf("    prometheus 127.0.0.1:%d\n    fastpack\n    codel\n%s", freeport.Get(t), body), origins...)

	in := uint16(dns.ClassINET)
	opcode := func(o int) func(*dns.Msg) { return func(m *dns.Msg) { m.Opcode = o } }
	cd := func(m *dns.Msg) { m.CheckingDisabled = true }
	edns := func(do bool) func(*dns.Msg) { return func(m *dns.Msg) { m.SetEdns0(1232, do) } }
	option := func(o dns.EDNS0) func(*dns.Msg) {
		return func(m *dns.Msg) { m.Extra[0].(*dns.OPT).Option = append(m.Extra[0].(*dns.OPT).Option, o) }
	}
	// record adds an A record to section 1 (answer), 2 (authority) or 3
	// (additional) of a query.
	record := func(section int) func(*dns.Msg) {
		return func(m *dns.Msg) {
			rr := &dns.A{Hdr: dns.RR_Header{Name: "example.org.", Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(192, 0, 2, 9)}
			to := [...]*[]dns.RR{&m.Answer, &m.Ns, &m.Extra}[section-1]
			*to = append(*to, rr)
		}
	}
	header := func(id, bits, qd uint16, rest ...byte) []byte {
		b := binary.BigEndian.AppendUint16(nil, id)
		b = binary.BigEndian.AppendUint16(b, bits)
		b = binary.BigEndian.AppendUint16(b, qd)
		return append(append(b, 0, 0, 0, 0, 0, 0), rest...)
	}
	www := headerQuery(t, "www.example.org.", dns.TypeA, in)
	label64 := append([]byte{64}, strings.Repeat("a", 64)...)

	const (
		stockOpcode = "CoreDNS's server, as miekg/dns's, answers an opcode it does not take without the question or the OPT record; codel's reader keeps the question and the chain answers (plugin/codel acceptAction)"
		malformed   = "a message that does not unpack is answered FORMERR with the header echoed, as miekg/dns's server (which CoreDNS's is) answers it; Knot sends nothing. RFC 1035 leaves it to the server"
		formerr     = "rcode 1 opcode 0 [qr] qd 0 an 0 ns 0 ar 0"
	)
	cases := []headerCase{
		{name: "opcode IQUERY", pkt: headerQuery(t, "example.org.", dns.TypeA, in, opcode(dns.OpcodeIQuery)),
			why: stockOpcode, plain: "rcode 4 opcode 1 [qr] qd 0 an 0 ns 0 ar 0"},
		{name: "opcode STATUS", pkt: headerQuery(t, "example.org.", dns.TypeA, in, opcode(dns.OpcodeStatus)),
			why: stockOpcode, plain: "rcode 4 opcode 2 [qr] qd 0 an 0 ns 0 ar 0"},
		{name: "opcode 3, unassigned", pkt: headerQuery(t, "example.org.", dns.TypeA, in, opcode(3), cd),
			why: stockOpcode + " (and copies CD)", plain: "rcode 4 opcode 3 [qr cd] qd 0 an 0 ns 0 ar 0"},
		{name: "opcode 15 with EDNS", pkt: headerQuery(t, "example.org.", dns.TypeA, in, opcode(15), edns(false)),
			why: stockOpcode, plain: "rcode 4 opcode 15 [qr] qd 0 an 0 ns 0 ar 0"},
		{name: "NOTIFY for a zone of its own", pkt: headerQuery(t, "example.org.", dns.TypeSOA, in, opcode(dns.OpcodeNotify), func(m *dns.Msg) { m.Authoritative = true })},
		{name: "NOTIFY for a zone it does not serve", pkt: headerQuery(t, "example.com.", dns.TypeSOA, in, opcode(dns.OpcodeNotify), func(m *dns.Msg) { m.Authoritative = true })},
		{name: "UPDATE", pkt: headerQuery(t, "example.org.", dns.TypeSOA, in, opcode(dns.OpcodeUpdate)),
			why:   "ontime takes no dynamic updates: NOTIMP, RFC 2136 section 2.2's answer for an opcode a server does not implement; Knot, which does, answers NOTAUTH where no ACL allows it. " + stockOpcode,
			ours:  "rcode 4 opcode 5 [qr] qd 1 an 0 ns 0 ar 0 q example.org. 6 1",
			plain: "rcode 4 opcode 5 [qr] qd 0 an 0 ns 0 ar 0"},
		{name: "QR set: a response, not a query", pkt: headerQuery(t, "www.example.org.", dns.TypeA, in, func(m *dns.Msg) { m.Response = true })},
		{name: "TC set in the query", pkt: headerQuery(t, "www.example.org.", dns.TypeA, in, func(m *dns.Msg) { m.Truncated = true })},
		{name: "Z set", pkt: headerQuery(t, "www.example.org.", dns.TypeA, in, func(m *dns.Msg) { m.Zero = true })},
		{name: "RA set", pkt: headerQuery(t, "www.example.org.", dns.TypeA, in, func(m *dns.Msg) { m.RecursionAvailable = true })},
		// RFC 4035 section 3.1.6: an authoritative server clears CD.
		{name: "RD, CD and AD set", pkt: headerQuery(t, "www.example.org.", dns.TypeA, in, cd, func(m *dns.Msg) { m.RecursionDesired, m.AuthenticatedData = true, true })},
		{name: "CD on a referral", pkt: headerQuery(t, "www.delegated.example.org.", dns.TypeA, in, cd)},
		{name: "CD on a denial", pkt: headerQuery(t, "nope.signed.test.", dns.TypeA, in, cd, edns(true))},
		{name: "CD outside every zone", pkt: headerQuery(t, "www.example.com.", dns.TypeA, in, cd)},
		{name: "CD on a type that is reserved", pkt: headerQuery(t, "example.org.", dns.TypeNone, in, cd)},
		{name: "CD on EDNS version 1", pkt: headerQuery(t, "www.example.org.", dns.TypeA, in, cd, edns(false), func(m *dns.Msg) { m.Extra[0].(*dns.OPT).SetVersion(1) }),
			why:   "CoreDNS's server answers BADVERS before any plugin, with SetReply's CD; codel answers it as Knot does",
			plain: "rcode 16 opcode 0 [qr cd] qd 1 an 0 ns 0 ar 1 edns 0 do false q www.example.org. 1 1"},
		{name: "AD and DO", pkt: headerQuery(t, "signed.test.", dns.TypeSOA, in, edns(true), func(m *dns.Msg) { m.AuthenticatedData = true })},
		{name: "class CH", pkt: headerQuery(t, "version.bind.", dns.TypeTXT, dns.ClassCHAOS, func(m *dns.Msg) { m.RecursionDesired = true }),
			why:  "CoreDNS's server refuses every class but IN before any plugin unless the chain has one that answers CH (chaos: TestOtherClassesWithChaosAsKnot); Knot tells its version",
			ours: "rcode 5 opcode 0 [qr rd] qd 1 an 0 ns 0 ar 0 q version.bind. 16 3"},
		{name: "class ANY", pkt: headerQuery(t, "example.org.", dns.TypeSOA, dns.ClassANY),
			why:  "as for CH: CoreDNS's server refuses it before any plugin, unless chaos is in the chain; Knot answers from the IN zone",
			ours: "rcode 5 opcode 0 [qr] qd 1 an 0 ns 0 ar 0 q example.org. 6 255"},
		{name: "AXFR without a transfer block", pkt: headerQuery(t, "example.org.", dns.TypeAXFR, in),
			why:  "these servers have no transfer block: zonestore refuses the transfer (the transfer plugin answers it where there is one); Knot, configured to transfer to loopback, answers NOTIMP over UDP and the zone over TCP",
			ours: "rcode 5 opcode 0 [qr] qd 1 an 0 ns 0 ar 0 q example.org. 252 1"},
		{name: "IXFR without its SOA", pkt: headerQuery(t, "example.org.", dns.TypeIXFR, in),
			why:  "as AXFR: refused without a transfer block; Knot answers FORMERR, an IXFR needing the client's SOA (RFC 1995 section 3)",
			ours: "rcode 5 opcode 0 [qr] qd 1 an 0 ns 0 ar 0 q example.org. 251 1"},
		{name: "type 0, reserved", pkt: headerQuery(t, "example.org.", dns.TypeNone, in)},
		{name: "MAILA", pkt: headerQuery(t, "example.org.", dns.TypeMAILA, in)},
		{name: "MAILB", pkt: headerQuery(t, "example.org.", dns.TypeMAILB, in)},
		{name: "OPT as the type", pkt: headerQuery(t, "example.org.", dns.TypeOPT, in)},
		{name: "TKEY as the type", pkt: headerQuery(t, "example.org.", dns.TypeTKEY, in)},
		{name: "TSIG as the type", pkt: headerQuery(t, "example.org.", dns.TypeTSIG, in)},
		{name: "type 128, meta", pkt: headerQuery(t, "example.org.", 128, in)},
		{name: "type 65535", pkt: headerQuery(t, "www.example.org.", 65535, in)},
		{name: "RRSIG without DO", pkt: headerQuery(t, "signed.test.", dns.TypeRRSIG, in, edns(false))},
		{name: "RRSIG with DO", pkt: headerQuery(t, "signed.test.", dns.TypeRRSIG, in, edns(true))},
		{name: "NSEC3PARAM", pkt: headerQuery(t, "nsec3.test.", dns.TypeNSEC3PARAM, in, edns(true))},
		{name: "DS at the apex", pkt: headerQuery(t, "signed.test.", dns.TypeDS, in, edns(true))},
		{name: "DNSKEY", pkt: headerQuery(t, "signed.test.", dns.TypeDNSKEY, in, edns(true))},
		{name: "no question", pkt: header(0x4242, 0, 0)},
		{name: "no question, EDNS", pkt: func() []byte {
			m := &dns.Msg{MsgHdr: dns.MsgHdr{Id: 0x4242}}
			m.SetEdns0(1232, false)
			b, _ := m.Pack()
			return b
		}(), why: "FORMERR without the OPT record, as miekg/dns's server answers a message of no question; codel answers it with one, as Knot does and RFC 6891 section 6.1.1 has every answer to a request with one do",
			plain: formerr},
		{name: "no question, EDNS and DO", pkt: func() []byte {
			m := &dns.Msg{MsgHdr: dns.MsgHdr{Id: 0x4242, RecursionDesired: true}}
			m.SetEdns0(4096, true)
			b, _ := m.Pack()
			return b
		}(), why: "as above", plain: "rcode 1 opcode 0 [qr rd] qd 0 an 0 ns 0 ar 0"},
		{name: "no question, an A record", pkt: func() []byte {
			m := &dns.Msg{MsgHdr: dns.MsgHdr{Id: 0x4242}}
			record(3)(m)
			b, _ := m.Pack()
			return b
		}()},
		{name: "two questions", pkt: func() []byte {
			m := &dns.Msg{MsgHdr: dns.MsgHdr{Id: 0x4242}}
			m.Question = []dns.Question{{Name: "www.example.org.", Qtype: dns.TypeA, Qclass: in}, {Name: "example.org.", Qtype: dns.TypeSOA, Qclass: in}}
			b, _ := m.Pack()
			return b
		}(), why: "FORMERR, as miekg/dns's server answers more than one question (RFC 9619 allows it); Knot sends nothing",
			ours: formerr},
		{name: "a record in the answer section", pkt: headerQuery(t, "example.org.", dns.TypeSOA, in, record(1))},
		{name: "a record in the authority section", pkt: headerQuery(t, "example.org.", dns.TypeSOA, in, record(2))},
		{name: "an address in the additional section", pkt: headerQuery(t, "example.org.", dns.TypeSOA, in, record(3))},
		{name: "an OPT record in the answer section", pkt: headerQuery(t, "www.example.org.", dns.TypeA, in, edns(false), func(m *dns.Msg) { m.Answer, m.Extra = m.Extra, nil }),
			why:  "RFC 6891 puts the OPT record in the additional section; ontime reads a query's EDNS there only and answers the query as one without; Knot answers FORMERR",
			ours: "rcode 0 opcode 0 [qr aa] qd 1 an 1 ns 0 ar 0 q www.example.org. 1 1\n  www.example.org.\t3600\tin\ta\t192.0.2.80"},
		{name: "an OPT record not owned by the root", pkt: headerQuery(t, "www.example.org.", dns.TypeA, in, edns(false), func(m *dns.Msg) { m.Extra[0].Header().Name = "example.org." })},
		{name: "EDNS size under 512", pkt: headerQuery(t, "big.example.org.", dns.TypeTXT, in, func(m *dns.Msg) { m.SetEdns0(100, false) }), udp: true,
			why: "truncated at 512 octets: zonestore alone is packed by CoreDNS's ScrubWriter, which keeps the records that fit (RFC 2181 section 9 has the client discard them all); fastpack's encoder truncates as Knot does",
			plain: "rcode 0 opcode 0 [qr aa tc] qd 1 an 5 ns 0 ar 1 edns 0 do false q big.example.org. 16 1" + func() string {
				var s string
				for i := range 5 {
					s += fmt.Sprintf("\n  big.example.org.\t3600\tin\ttxt\t\"%d123456789012345678901234567890123456789012345678901234567890123456789\"", i)
				}
				return s
			}()},
		{name: "NSID asked", pkt: headerQuery(t, "www.example.org.", dns.TypeA, in, edns(false), option(&dns.EDNS0_NSID{Code: dns.EDNS0NSID}))},
		{name: "padding", pkt: headerQuery(t, "www.example.org.", dns.TypeA, in, edns(false), option(&dns.EDNS0_PADDING{Padding: make([]byte, 20)}))},
		{name: "an option longer than its OPT record", pkt: optRDATA(headerQuery(t, "www.example.org.", dns.TypeA, in, edns(false)), 0, 10, 0, 8)},
		{name: "an OPT record cut inside an option's header", pkt: optRDATA(headerQuery(t, "www.example.org.", dns.TypeA, in, edns(false)), 0, 10, 0)},
		{name: "a client-subnet option of no family known", pkt: headerQuery(t, "www.example.org.", dns.TypeA, in, edns(false), option(&dns.EDNS0_LOCAL{Code: dns.EDNS0SUBNET, Data: []byte{0, 9, 24, 0, 192, 0, 2}})),
			why:  "miekg/dns does not unpack a client-subnet option whose family is neither IPv4 nor IPv6, so the message is FORMERR, as stock CoreDNS answers it; Knot, which reads no such option without its geoip module, answers the question",
			ours: "rcode 1 opcode 0 [qr] qd 1 an 0 ns 0 ar 0 q www.example.org. 1 1"},
		{name: "EXPIRE asked", pkt: headerQuery(t, "example.org.", dns.TypeSOA, in, edns(false), option(&dns.EDNS0_EXPIRE{Code: dns.EDNS0EXPIRE}))},
		{name: "the root", pkt: headerQuery(t, ".", dns.TypeSOA, in)},
		{name: "octets after the question", pkt: append(append([]byte{}, www...), 1, 2, 3),
			why:  "the message's records end before its last octets: ontime answers the question, as miekg/dns unpacks it; Knot answers FORMERR",
			ours: "rcode 0 opcode 0 [qr aa] qd 1 an 1 ns 0 ar 0 q www.example.org. 1 1\n  www.example.org.\t3600\tin\ta\t192.0.2.80"},
		{name: "a header cut short", pkt: header(0x4242, 0, 1)[:6]},
		{name: "a question cut short", pkt: www[:20], why: malformed, ours: formerr},
		{name: "a name that points at itself", pkt: header(0x4242, 0, 1, 0xc0, 12, 0, 1, 0, 1), why: malformed, ours: formerr},
		{name: "a label of 64 octets", pkt: header(0x4242, 0, 1, append(label64, 0, 0, 1, 0, 1)...), why: malformed, ours: formerr},
	}
	// The cases asked eight at a time: one with no answer waits three
	// seconds for it, and a burst of them all could build a queue that
	// codel sheds.
	servers := []*server{knot, plain, full}
	answers := make([][2][3]string, len(cases))
	var wg sync.WaitGroup
	asking := make(chan struct{}, 8)
	for i, tc := range cases {
		for tcp := range 2 {
			for j, s := range servers {
				wg.Go(func() {
					asking <- struct{}{}
					defer func() { <-asking }()
					answers[i][tcp][j] = headerAnswer(askRaw(s.addr, tc.pkt, tcp == 1))
				})
			}
		}
	}
	wg.Wait()
	for i, tc := range cases {
		for tcp := range 2 {
			k := answers[i][tcp][0]
			for j, name := range []string{"zonestore", "the full chain"} {
				want, why := tc.ours, tc.why
				if j == 0 && tc.plain != "" {
					want = tc.plain
				}
				if want == "" || (tc.udp && tcp == 1) {
					want, why = k, "as Knot"
				}
				if got := answers[i][tcp][j+1]; got != want {
					t.Errorf("%s (tcp %v): %s answers\n%s\nwant (%s)\n%s\nKnot answers\n%s", tc.name, tcp == 1, name, got, why, want, k)
				}
			}
		}
	}
}

// TestOtherClassesWithChaosAsKnot: with the chaos plugin in the chain,
// CoreDNS's server lets other classes than IN through to the plugins, and
// ontime answers them as Knot does: class ANY from the IN zones (QCLASS
// * of RFC 1035 section 3.2.5), CH and HS for a zone's name REFUSED, and
// version.bind in CH with its own version. The full chain is asked each
// question three times, the third answered from the octets it kept.
func TestOtherClassesWithChaosAsKnot(t *testing.T) {
	zones := conformanceZones(t)
	knot := startKnot(t, zones)
	body, origins := zonestoreLines(zones, "")
	plain := startCoreDNS(t, "    chaos ontime\n"+body, origins...)
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	full := startCoreDNSWith(t, onePAnswer, fmt.Sprintf("    prometheus %s\n    chaos ontime\n    fastpack\n    codel\n%s", prom, body), origins...)
	for _, c := range []struct {
		name          string
		qtype, qclass uint16
		ours          string // "": as Knot
	}{
		{"example.org.", dns.TypeSOA, dns.ClassANY, ""},
		{"www.example.org.", dns.TypeA, dns.ClassANY, ""},
		{"nx.example.org.", dns.TypeA, dns.ClassANY, ""},
		{"www.delegated.example.org.", dns.TypeA, dns.ClassANY, ""},
		{"www.example.com.", dns.TypeA, dns.ClassANY, ""},
		{"example.org.", dns.TypeSOA, dns.ClassCHAOS, ""},
		{"www.example.org.", dns.TypeA, dns.ClassHESIOD, ""},
		{"version.bind.", dns.TypeTXT, dns.ClassCHAOS, "rcode 0 opcode 0 [qr] qd 1 an 1 ns 0 ar 0 q version.bind. 16 3\n  version.bind.\t0\tch\ttxt\t\"ontime\""},
	} {
		pkt := headerQuery(t, c.name, c.qtype, c.qclass)
		for _, tcp := range []bool{false, true} {
			want := headerAnswer(askRaw(knot.addr, pkt, tcp))
			if c.ours != "" {
				want = c.ours
			}
			got := []string{headerAnswer(askRaw(plain.addr, pkt, tcp))}
			for range 3 {
				got = append(got, headerAnswer(askRaw(full.addr, pkt, tcp)))
			}
			for i, g := range got {
				if g != want {
					t.Errorf("%s %d %d (tcp %v), server %d of zonestore, the full chain thrice: answers\n%s\nwant\n%s", c.name, c.qtype, c.qclass, tcp, i, g, want)
				}
			}
		}
	}
	// The four answers from a zone, over UDP and over TCP: kept at their
	// second asking, found at their third.
	if hits := metric(t, prom, "coredns_zonestore_replay_hits_total"); hits < 8 {
		t.Errorf("%g answers replayed, want the 8 from a zone", hits)
	}
}
