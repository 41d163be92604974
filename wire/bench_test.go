package wire

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/raceflag"
)

// benchMessages are the messages the encoder is measured on, beside
// miekg/dns's PackBuffer of the same message. size is the limit each is
// encoded under (Scrub's for miekg/dns).
func benchMessages() []struct {
	name string
	m    *dns.Msg
	size int
} {
	small := withReply("www.example.org.", dns.TypeA, rrs("www.example.org. 300 IN A 192.0.2.1"),
		rrs("example.org. 3600 IN NS ns1.example.org.", "example.org. 3600 IN NS ns2.example.org."),
		rrs("ns1.example.org. 3600 IN A 192.0.2.53", "ns2.example.org. 3600 IN A 192.0.2.54"))
	small.SetEdns0(1232, false)
	syn := synthetic()
	dnssec := syn["DNSSEC answer"].Copy()
	dnssec.SetEdns0(1232, true)
	nx := syn["NXDOMAIN with NSEC3 proof"].Copy()
	nx.SetEdns0(1232, true)
	deleg := syn["delegation with glue"].Copy()
	deleg.SetEdns0(1232, false)
	var big []string
	for i := 0; i < 60; i++ {
		big = append(big, fmt.Sprintf("big.example.org. 300 IN TXT \"%s %d\"", strings.Repeat("x", 20), i))
	}
	trunc := withReply("big.example.org.", dns.TypeTXT, rrs(big...), nil, nil)
	trunc.SetEdns0(512, false)
	return []struct {
		name string
		m    *dns.Msg
		size int
	}{
		{"A+2NS+glue", small, 1232},
		{"DNSSEC", dnssec, 1232},
		{"NXDOMAIN+NSEC3", nx, 1232},
		{"delegation", deleg, 1232},
		{"owner×20", syn["one owner twenty times"], 512},
		{"50labels", syn["fifty one-character labels"], 1232},
		{"truncating", trunc, 512},
	}
}

// BenchmarkEncode measures, for each message, the encoder beside its
// baseline (benchPackBuffer), one after the other, so that with -count the
// two take turns and share this noisy machine's slow and fast moments.
func BenchmarkEncode(b *testing.B) {
	for _, c := range benchMessages() {
		one := []*dns.Msg{c.m}
		b.Run(c.name+"/wire", func(b *testing.B) { benchEncode(b, one, c.size, false) })
		// The same, every name scanned and every signature and key
		// decoded as if met for the first time (scanned.go, decoded.go,
		// nsec3s.go).
		b.Run(c.name+"/wire-first", func(b *testing.B) { benchEncode(b, one, c.size, true) })
		b.Run(c.name+"/PackBuffer", func(b *testing.B) { benchPackBuffer(b, one, c.size) })
	}
}

// benchEncode encodes msgs in turn, again and again, with one encoder;
// first turns off what it remembers from one message to the next. The
// number of messages is a power of two, so that choosing the next is a
// mask rather than a division.
func benchEncode(b *testing.B, msgs []*dns.Msg, size int, first bool) {
	e := NewEncoder()
	e.dec.off, e.scan.off, e.n3.off = first, first, first
	buf := make([]byte, 0, dns.MaxMsgSize)
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		var err error
		if buf, err = e.Encode(buf, msgs[i&(len(msgs)-1)], size); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(buf)))
}

// benchPackBuffer is benchEncode's baseline: what CoreDNS does for every
// response, Truncate (as Scrub does) and PackBuffer into a reused buffer,
// with compression on.
func benchPackBuffer(b *testing.B, msgs []*dns.Msg, size int) {
	buf := make([]byte, dns.MaxMsgSize)
	b.ReportAllocs()
	var out []byte
	for i := 0; b.Loop(); i++ {
		m := *msgs[i&(len(msgs)-1)] // Truncate re-slices the sections of this copy only
		m.Truncate(size)
		m.Compress = true
		var err error
		if out, err = m.PackBuffer(buf); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(len(out)))
}

func TestEncodeDoesNotAllocate(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector's instrumentation allocates where the encoder does not")
	}
	e := NewEncoder()
	buf := make([]byte, 0, dns.MaxMsgSize)
	for _, c := range benchMessages() {
		buf, _ = e.Encode(buf, c.m, c.size) // warm the tables
		n := testing.AllocsPerRun(100, func() {
			buf, _ = e.Encode(buf, c.m, c.size)
		})
		if n != 0 {
			t.Errorf("%s: %.1f allocations per message", c.name, n)
		}
		if _, err := parity(e, c.m, c.size); err != nil {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// BenchmarkEncodeVaried is A+2NS+glue as a server sends it for a zone's
// many names: each message asks for another of 8,192 hosts (the question
// a fresh string, as a query's is, and the answer owned by it), with the
// zone's name servers and glue the same in all. The encoder meets each
// host name for the first time in a long while (more names than it
// remembers), the name servers every time.
func BenchmarkEncodeVaried(b *testing.B) {
	ns := rrs("example.org. 3600 IN NS ns1.example.org.", "example.org. 3600 IN NS ns2.example.org.")
	glue := rrs("ns1.example.org. 3600 IN A 192.0.2.53", "ns2.example.org. 3600 IN A 192.0.2.54")
	msgs := make([]*dns.Msg, 8192)
	for i := range msgs {
		host := fmt.Sprintf("host%d.example.org.", i)
		m := withReply(strings.Clone(host), dns.TypeA, rrs(host+" 300 IN A 192.0.2.1"), ns, glue)
		m.SetEdns0(1232, false)
		msgs[i] = m
	}
	b.Run("wire", func(b *testing.B) { benchEncode(b, msgs, 1232, false) })
	b.Run("PackBuffer", func(b *testing.B) { benchPackBuffer(b, msgs, 1232) })
}

// BenchmarkEncodeNegative is a random-subdomain flood's answer: each
// message says NXDOMAIN for another of 8,192 names never asked before (a
// fresh string with a random label), with the zone's SOA, the same record
// in all, as zonestore hands it.
func BenchmarkEncodeNegative(b *testing.B) {
	soa := rrs("example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. 2026120601 7200 3600 1209600 3600")
	msgs := make([]*dns.Msg, 8192)
	for i := range msgs {
		m := withReply(fmt.Sprintf("%06x.example.org.", i*2654435761&0xFFFFFF), dns.TypeA, nil, soa, nil)
		m.Rcode = dns.RcodeNameError
		m.SetEdns0(1232, false)
		msgs[i] = m
	}
	b.Run("wire", func(b *testing.B) { benchEncode(b, msgs, 1232, false) })
	b.Run("PackBuffer", func(b *testing.B) { benchPackBuffer(b, msgs, 1232) })
}

// BenchmarkEncodeNegativeNSEC is a random-subdomain flood's answer from a
// zone signed with NSEC, as zonestore hands it (the load test's
// `SIGNED=nsec FLOOD=100`): each message says NXDOMAIN for another of
// 8,192 names never asked before, with the SOA and its signature, the
// NSEC record that covers the name and the one that covers the wildcard,
// each with its signature. As in the load test, most names (those whose
// first character is a digit) fall between the apex and the zone's first
// name, where one NSEC record, the apex's, covers both; the others fall
// between two of 512 pairs of the zone's names.
func BenchmarkEncodeNegativeNSEC(b *testing.B) {
	const sig = exampleSignature
	soa := rrs("example.org. 300 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300",
		"example.org. 300 IN RRSIG SOA 13 2 3600 "+sig)
	apex := rrs("example.org. 300 IN NSEC ent1.example.org. NS SOA MX TXT RRSIG NSEC DNSKEY",
		"example.org. 300 IN RRSIG NSEC 13 2 300 "+sig)
	hosts := make([][]dns.RR, 512)
	for i := range hosts {
		hosts[i] = rrs(fmt.Sprintf("host%d.example.org. 300 IN NSEC host%d.example.org. A AAAA RRSIG NSEC", i, i+1),
			fmt.Sprintf("host%d.example.org. 300 IN RRSIG NSEC 13 3 300 ", i)+sig)
	}
	msgs := make([]*dns.Msg, 8192)
	for i := range msgs {
		label := fmt.Sprintf("%06x", i*2654435761&0xFFFFFF)
		ns := cat(soa, apex)
		if label[0] > '9' {
			ns = cat(soa, hosts[i%len(hosts)], apex)
		}
		m := withReply(label+".example.org.", dns.TypeA, nil, ns, nil)
		m.Rcode = dns.RcodeNameError
		m.SetEdns0(1232, true)
		msgs[i] = m
	}
	b.Run("wire", func(b *testing.B) { benchEncode(b, msgs, 1232, false) })
	b.Run("PackBuffer", func(b *testing.B) { benchPackBuffer(b, msgs, 1232) })
}
