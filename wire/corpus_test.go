package wire

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/conformance"
	"github.com/ontimedns/ontime/zonestore"
)

var suiteZones = []string{"example.org", "signed.test", "nsec3.test"}

// answers returns zonestore's replies to the conformance corpus, each with
// the size its query allows, as the zonestore plugin builds them and as
// request.SizeAndDo gives them their OPT record.
func answers(t testing.TB) (msgs []*dns.Msg, sizes []int) {
	t.Helper()
	zones := map[string]*zonestore.Zone{}
	for _, o := range suiteZones {
		z, err := zonestore.ParseFile(filepath.Join("..", "testdata", "zones", o+".zone"), o)
		if err != nil {
			t.Fatal(err)
		}
		zones[o] = z
	}
	for _, q := range conformance.Corpus(suiteZones) {
		var z *zonestore.Zone
		for o, zz := range zones {
			if dns.IsSubDomain(o+".", q.Name) {
				z = zz
			}
		}
		if z == nil {
			continue
		}
		req := q.Msg()
		res := z.Lookup(q.Name, q.Qtype, q.Do)
		m := new(dns.Msg)
		m.SetReply(req)
		m.Authoritative, m.Rcode = res.Authoritative, res.Rcode
		m.Answer, m.Ns, m.Extra = res.Answer, res.Ns, res.Extra
		if q.EDNS {
			m.SetEdns0(q.Bufsz, q.Do)
		}
		msgs = append(msgs, m)
		sizes = append(sizes, q.Size())
	}
	return msgs, sizes
}

func TestParityConformanceAnswers(t *testing.T) {
	msgs, sizes := answers(t)
	if len(msgs) < 2000 {
		t.Fatalf("%d answers, want the whole corpus", len(msgs))
	}
	e := NewEncoder()
	truncated, leftOutOnly := 0, 0
	counted := lensCounted
	for i, m := range msgs {
		// Each answer at the size its query allows, and at the edges.
		for _, size := range []int{sizes[i], 512, 1232, dns.MaxMsgSize} {
			b, err := parity(e, m, size)
			if err != nil {
				t.Fatalf("%s at %d: %v", m.Question[0].String(), size, err)
			}
			switch {
			case b[2]&0x02 != 0:
				truncated++
			case leftOut(m, b):
				leftOutOnly++ // additional data left out without TC: not counted either
			}
		}
		if e.Fallbacks != 0 {
			t.Errorf("%s: %d records fell back to miekg/dns", m.Question[0].String(), e.Fallbacks)
		}
	}
	if truncated == 0 {
		t.Fatal("no answer was truncated: the corpus does not exercise truncation")
	}
	if leftOutOnly == 0 {
		t.Fatal("no answer left additional data out without TC: the corpus does not exercise it")
	}
	// Every encoding kept whole had its Msg.Len counted, and found equal.
	if counted = lensCounted - counted; counted != 4*len(msgs)-truncated-leftOutOnly {
		t.Errorf("%d encodings counted Msg.Len, want the %d kept whole", counted, 4*len(msgs)-truncated-leftOutOnly)
	}
	t.Logf("%d answers × 4 sizes, %d encodings truncated, %d with additional data left out without TC", len(msgs), truncated, leftOutOnly)
}

// synthetic are the messages the issue names beside the corpus.
func synthetic() map[string]*dns.Msg {
	ms := map[string]*dns.Msg{}
	long := fiftyLabels('a')
	ms["fifty one-character labels"] = withReply(long, dns.TypeA,
		rrs(long+" 300 IN A 192.0.2.1", long+" 300 IN A 192.0.2.2"),
		rrs("example.org. 300 IN NS "+fiftyLabels('b')), rrs(fiftyLabels('b')+" 300 IN A 192.0.2.3"))

	var twenty []string
	for i := 0; i < 20; i++ {
		twenty = append(twenty, fmt.Sprintf("www.example.org. 300 IN A 192.0.2.%d", i+1))
	}
	ms["one owner twenty times"] = withReply("www.example.org.", dns.TypeA, rrs(twenty...), nil, nil)

	ms["delegation with glue"] = withReply("www.sub.example.org.", dns.TypeA, nil,
		rrs("sub.example.org. 3600 IN NS ns1.sub.example.org.", "sub.example.org. 3600 IN NS ns2.sub.example.org.",
			"sub.example.org. 3600 IN NS ns.elsewhere.net."),
		rrs("ns1.sub.example.org. 3600 IN A 192.0.2.53", "ns1.sub.example.org. 3600 IN AAAA 2001:db8::53",
			"ns2.sub.example.org. 3600 IN A 192.0.2.54"))
	ms["delegation with glue"].Authoritative = false

	ms["mixed case everywhere"] = withReply("WwW.ExAmPlE.oRg.", dns.TypeMX,
		rrs("WwW.ExAmPlE.oRg. 300 IN MX 10 MAIL.example.ORG.", "www.example.org. 300 IN MX 20 mail.EXAMPLE.org."),
		rrs("EXAMPLE.ORG. 300 IN NS ns.Example.Org."), rrs("Mail.Example.Org. 300 IN A 192.0.2.25"))

	ms["escaped labels"] = withReply(`weird\.label.example.org.`, dns.TypeTXT,
		rrs(`weird\.label.example.org. 300 IN TXT "a\"quoted\" \\ string" "\255\000"`,
			`\065bc.example.org. 300 IN CNAME sp\032ace.example.org.`, `sp\032ace.example.org. 300 IN A 192.0.2.1`,
			`a\.b\\c.example.org. 300 IN PTR \(paren\).example.org.`), nil, nil)

	ms["unknown types"] = withReply("www.example.org.", 65534,
		rrs(`www.example.org. 300 IN TYPE65534 \# 4 0a0b0c0d`, `www.example.org. 300 IN TYPE65280 \# 0`,
			`www.example.org. 300 CLASS4 TYPE65281 \# 2 ffff`), nil, nil)

	var big []string
	for i := 0; i < 400; i++ {
		big = append(big, fmt.Sprintf("big.example.org. 300 IN TXT \"%s %d\"", strings.Repeat("x", 40), i))
	}
	ms["large RRset that truncates"] = withReply("big.example.org.", dns.TypeTXT, rrs(big...), nil, nil)

	// Past 0x3FFF nothing may be pointed to: names after the first 16 KiB
	// must still be compressed only against what lies before it.
	var far []string
	for i := 0; i < 300; i++ {
		far = append(far, fmt.Sprintf("h%d.example.org. 300 IN TXT \"%s\"", i, strings.Repeat("y", 100)))
	}
	for i := 0; i < 50; i++ {
		far = append(far, fmt.Sprintf("late%d.example.org. 300 IN CNAME h%d.example.org.", i, 299-i))
	}
	ms["names past the pointer limit"] = withReply("h0.example.org.", dns.TypeANY, rrs(far...), nil, nil)

	ms["NXDOMAIN with NSEC3 proof"] = withReply("nx.nsec3.test.", dns.TypeA, nil,
		rrs("nsec3.test. 3600 IN SOA ns1.nsec3.test. hostmaster.nsec3.test. 1 7200 3600 1209600 3600",
			"nsec3.test. 3600 IN RRSIG SOA 13 2 3600 20460101000000 20260101000000 12345 nsec3.test. "+sig64,
			"2vptu5timamqttgl4luu9kg21e0aor3s.nsec3.test. 3600 IN NSEC3 1 1 0 CAFE 2VPTU5TIMAMQTTGL4LUU9KG21E0AOR3T A NS SOA RRSIG DNSKEY NSEC3PARAM",
			"2vptu5timamqttgl4luu9kg21e0aor3s.nsec3.test. 3600 IN RRSIG NSEC3 13 3 3600 20460101000000 20260101000000 12345 nsec3.test. "+sig64,
			"k8udemvp1j2f7eg6jebps17vp3n8i58h.nsec3.test. 3600 IN NSEC3 1 1 0 cafe kohar7mbb8dc2ce8a9qvl8hon4k53uhi TXT RRSIG TYPE65534",
			"k8udemvp1j2f7eg6jebps17vp3n8i58h.nsec3.test. 3600 IN RRSIG NSEC3 13 3 3600 20460101000000 20260101000000 12345 nsec3.test. "+sig64),
		nil)
	ms["NXDOMAIN with NSEC3 proof"].Rcode = dns.RcodeNameError

	ms["DNSSEC answer"] = withReply("www.signed.test.", dns.TypeA,
		rrs("www.signed.test. 300 IN A 192.0.2.80", "www.signed.test. 300 IN RRSIG A 13 3 300 20460101000000 20260101000000 12345 signed.test. "+sig64),
		rrs("signed.test. 300 IN NSEC www.signed.test. A NS SOA RRSIG NSEC DNSKEY TYPE1234",
			"signed.test. 300 IN DNSKEY 257 3 13 "+sig64, "signed.test. 300 IN DS 12345 13 2 "+strings.Repeat("ab", 32)),
		nil)

	ms["extended rcode"] = withReply("x.example.org.", dns.TypeA, nil, nil, nil)
	ms["extended rcode"].Rcode = dns.RcodeBadVers
	ms["extended rcode"].SetEdns0(1232, true)

	ms["EDNS options"] = withReply("x.example.org.", dns.TypeA, nil, nil, nil)
	o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT, Class: 1232}}
	o.Option = append(o.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708a1a2a3a4a5a6a7a8"},
		&dns.EDNS0_NSID{Code: dns.EDNS0NSID, Nsid: "6f6e74696d65"}, &dns.EDNS0_EDE{InfoCode: 3, ExtraText: "stale"},
		&dns.EDNS0_PADDING{Padding: make([]byte, 17)}, &dns.EDNS0_TCP_KEEPALIVE{Code: dns.EDNS0TCPKEEPALIVE, Timeout: 100})
	ms["EDNS options"].Extra = append(ms["EDNS options"].Extra, o)

	ms["EDNS option through miekg/dns"] = withReply("x.example.org.", dns.TypeA, nil, nil, nil)
	o2 := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT, Class: 4096}}
	o2.Option = append(o2.Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: []byte{192, 0, 2, 0}})
	ms["EDNS option through miekg/dns"].Extra = append(ms["EDNS option through miekg/dns"].Extra, o2)

	ms["empty"] = new(dns.Msg)
	ms["root"] = withReply(".", dns.TypeNS, rrs(". 300 IN NS a.root-servers.net."), nil, nil)
	return ms
}

const sig64 = "B16TeUmn9+sIYSLl3XDoBR3PBfwxttC+eWM1fEUo+pmauPlQVQRO2X7gmoJBmA5jKK6Hy5zMlef+IqNQKpGTGw=="

func TestParitySynthetic(t *testing.T) {
	e := NewEncoder()
	names := make([]string, 0)
	ms := synthetic()
	for n := range ms {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		for _, size := range []int{512, 1232, 4096, dns.MaxMsgSize} {
			if _, err := parity(e, ms[n], size); err != nil {
				t.Errorf("%s at %d: %v", n, size, err)
			}
		}
	}
}

// TestParityAcrossGenerationWrap: the compression tables forget a message
// by moving to the next generation; when the counter wraps they are
// cleared, so no slot of an old message is taken for one of the new.
func TestParityAcrossGenerationWrap(t *testing.T) {
	e := NewEncoder()
	ms := synthetic()
	for _, m := range ms { // slots of the generations after the wrap, left behind
		if _, err := parity(e, m, 1232); err != nil {
			t.Fatal(err)
		}
	}
	e.names.gen = math.MaxUint32 - 3
	for round := range 8 {
		for n, m := range ms {
			if _, err := parity(e, m, 1232); err != nil {
				t.Fatalf("round %d (generation %d), %s: %v", round, e.names.gen, n, err)
			}
		}
	}
	if e.names.gen > 1000 {
		t.Fatalf("generation %d: never wrapped", e.names.gen)
	}
}

// TestListFindsWhatTheTableFinds: a message's names compressed through the
// list (up to eight names) give the very bytes the suffix table alone
// gives, on every message of the synthetic set and the conformance corpus,
// at every size: the two ways choose the same suffix and the same offset.
func TestListFindsWhatTheTableFinds(t *testing.T) {
	listed, hashed := NewEncoder(), NewEncoder()
	hashed.names.maxList = 0
	var ms []*dns.Msg
	for _, m := range synthetic() {
		ms = append(ms, m)
	}
	answers, _ := answers(t)
	ms = append(ms, answers...)
	compared := 0
	for _, m := range ms {
		for _, size := range []int{512, 1232, dns.MaxMsgSize} {
			a, errA := listed.Encode(nil, m, size)
			b, errB := hashed.Encode(nil, m, size)
			if (errA == nil) != (errB == nil) || !bytes.Equal(a, b) {
				t.Fatalf("%v at %d:\nlist   % x (%v)\ntable  % x (%v)", m.Question, size, a, errA, b, errB)
			}
			compared++
		}
	}
	if compared < 1000 {
		t.Fatalf("only %d messages compared", compared)
	}
}

// TestPointerLimit checks that no pointer reaches past 0x3FFF, walking our
// bytes name by name.
func TestPointerLimit(t *testing.T) {
	e := NewEncoder()
	m := synthetic()["names past the pointer limit"]
	b, err := e.Encode(nil, m, dns.MaxMsgSize)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) < 2*maxPointer {
		t.Fatalf("message of %d octets does not reach past the limit", len(b))
	}
	pointers := 0
	var msg dns.Msg
	if err := msg.Unpack(b); err != nil {
		t.Fatal(err)
	}
	off := headerLen
	off = skipName(t, b, off, &pointers) + 4
	for range msg.Answer {
		off = skipName(t, b, off, &pointers)
		rdlen := int(b[off+8])<<8 | int(b[off+9])
		typ := int(b[off])<<8 | int(b[off+1])
		off += 10
		if typ == int(dns.TypeCNAME) {
			skipName(t, b, off, &pointers)
		}
		off += rdlen
	}
	if pointers < 300 {
		t.Fatalf("only %d pointers: compression did not run", pointers)
	}
}

func skipName(t *testing.T, b []byte, off int, pointers *int) int {
	for {
		l := int(b[off])
		switch {
		case l == 0:
			return off + 1
		case l&0xC0 == 0xC0:
			p := (l&0x3F)<<8 | int(b[off+1])
			if p >= maxPointer || p >= off {
				t.Fatalf("pointer at %d to %#x", off, p)
			}
			*pointers++
			return off + 2
		default:
			off += l + 1
		}
	}
}

// compressible are the types whose RDATA names RFC 3597 section 4 lets a
// server compress: those of RFC 1035.
var compressible = map[uint16]bool{
	dns.TypeNS: true, dns.TypeMD: true, dns.TypeMF: true, dns.TypeCNAME: true, dns.TypeSOA: true,
	dns.TypeMB: true, dns.TypeMG: true, dns.TypeMR: true, dns.TypePTR: true, dns.TypeMINFO: true, dns.TypeMX: true,
}

// miekgCompressesAgainstRFC3597 lists the types whose RDATA names miekg/dns
// compresses though RFC 3597 forbids it; for those alone our encoder may be
// longer. With miekg/dns v1.1.73 the list is empty, and
// TestMiekgCompressionList proves it type by type.
var miekgCompressesAgainstRFC3597 = map[uint16]bool{}

// sample builds one record of type t from a few RDATA patterns, the first
// that miekg/dns both unpacks and packs again, or nil.
func sample(owner string, t uint16) dns.RR {
	nameRdata := []byte{3, 'f', 'o', 'o', 7, 'e', 'x', 'a', 'm', 'p', 'l', 'e', 3, 'o', 'r', 'g', 0}
	patterns := [][]byte{
		append(append([]byte{0, 10}, nameRdata...), nameRdata...),
		append([]byte{0, 10}, nameRdata...),
		append(append([]byte{}, nameRdata...), nameRdata...),
		nameRdata,
		append(append([]byte{0, 1, 0, 2, 0, 3}, nameRdata...), 1, 2, 3),
		{1, 2, 3, 4},
		{0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1},
		{0, 1, 3, 13, 1, 2, 3, 4, 5, 6, 7, 8},
		{},
	}
	for _, p := range patterns {
		hdr := make([]byte, 0, 512)
		hdr, _ = appendName(hdr, owner)
		hdr = append(hdr, byte(t>>8), byte(t), 0, 1, 0, 0, 1, 0, byte(len(p)>>8), byte(len(p)))
		hdr = append(hdr, p...)
		rr, _, err := dns.UnpackRR(hdr, 0)
		if err != nil || rr == nil {
			continue
		}
		buf := make([]byte, 1024)
		if _, err := dns.PackRR(rr, buf, 0, nil, false); err != nil {
			continue
		}
		return rr
	}
	return nil
}

func TestParityEveryType(t *testing.T) {
	e := NewEncoder()
	var types []int
	for typ := range dns.TypeToRR {
		types = append(types, int(typ))
	}
	sort.Ints(types)
	covered, fellBack, skipped := 0, []string{}, []string{}
	for _, ti := range types {
		typ := uint16(ti)
		rr := sample("www.example.org.", typ)
		if rr == nil {
			skipped = append(skipped, dns.TypeToString[typ])
			continue
		}
		// The record twice, its names again after it, so that compression
		// around its RDATA is exercised both ways.
		m := withReply("www.example.org.", typ, []dns.RR{rr, dns.Copy(rr)},
			rrs("example.org. 300 IN NS foo.example.org."), rrs("foo.example.org. 300 IN A 192.0.2.1"))
		for _, size := range []int{512, dns.MaxMsgSize} {
			if _, err := parity(e, m, size); err != nil {
				t.Errorf("%s: %v", dns.TypeToString[typ], err)
			}
		}
		if e.Fallbacks > 0 {
			fellBack = append(fellBack, dns.TypeToString[typ])
		} else {
			covered++
		}
	}
	if len(skipped) > 8 {
		t.Errorf("no sample record for %d types: %v", len(skipped), skipped)
	}
	t.Logf("%d types encoded by the fast path, %d through miekg/dns: %v; no sample for %v", covered, len(fellBack), fellBack, skipped)
}

// TestMiekgCompressionList finds, for each type with a name in its RDATA,
// whether miekg/dns compresses that name, and checks the answer against
// RFC 3597 and miekgCompressesAgainstRFC3597.
func TestMiekgCompressionList(t *testing.T) {
	for typ := range dns.TypeToRR {
		rr := sample("www.example.org.", typ)
		if rr == nil {
			continue
		}
		m := withReply("foo.example.org.", dns.TypeA, []dns.RR{rr}, nil, nil)
		m.Compress = true
		on, err1 := m.Pack()
		m.Compress = false
		off, err2 := m.Pack()
		if err1 != nil || err2 != nil {
			continue
		}
		// Owner www.example.org. compresses "example.org." (13 → 2+4):
		// any saving beyond the owner's is in the RDATA.
		saved := len(off) - len(on)
		ownerSaving := len("\x03www\x07example\x03org\x00") - len("\x03www") - 2
		rdataCompressed := saved > ownerSaving
		want := compressible[typ] || miekgCompressesAgainstRFC3597[typ]
		if rdataCompressed && !want {
			t.Errorf("miekg/dns compresses RDATA names of %s, which RFC 3597 forbids: add it to miekgCompressesAgainstRFC3597", dns.TypeToString[typ])
		}
	}
}

func TestEncodeDeclines(t *testing.T) {
	e := NewEncoder()
	bad := map[string]*dns.Msg{}
	m := withReply("x.example.org.", dns.TypeA, nil, nil, nil)
	m.Rcode = dns.RcodeBadVers // extended rcode without OPT
	bad["extended rcode without OPT"] = m
	m2 := withReply("x.example.org.", dns.TypeA, nil, nil, nil)
	m2.SetEdns0(1232, false)
	m2.SetEdns0(4096, false)
	bad["two OPT records"] = m2
	bad["relative name"] = withReply("x.example.org", dns.TypeA, nil, nil, nil)
	bad["empty label"] = withReply("x..example.org.", dns.TypeA, nil, nil, nil)
	bad["label over 63"] = withReply(strings.Repeat("a", 64)+".org.", dns.TypeA, nil, nil, nil)
	bad["nil record"] = withReply("x.example.org.", dns.TypeA, []dns.RR{nil}, nil, nil)
	m3 := withReply("x.example.org.", dns.TypeA, nil, nil, nil)
	m3.SetEdns0(1232, false)
	m3.Extra = append([]dns.RR{&dns.RFC3597{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT, Class: 512}}}, m3.Extra...)
	bad["a second OPT record, not a *dns.OPT"] = m3
	for name, m := range bad {
		if _, err := e.Encode(nil, m, 512); err == nil {
			t.Errorf("%s: encoded", name)
		}
		if _, err := m.Pack(); err == nil && !strings.Contains(name, "OPT record") {
			t.Errorf("%s: miekg/dns packs it, so ours should too", name)
		}
	}
	if _, err := parity(e, synthetic()["DNSSEC answer"], 512); errors.Is(err, errDeclined) {
		t.Fatal("encoder declined a good message after bad ones")
	}
}
