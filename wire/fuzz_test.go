package wire

import (
	"errors"
	"testing"

	"github.com/miekg/dns"
)

// FuzzEncode feeds arbitrary messages (unpacked from fuzzed bytes) through
// both encoders and applies the parity check. Declining is allowed only
// where miekg/dns cannot pack the message either, or where it holds more
// than one OPT record.
func FuzzEncode(f *testing.F) {
	for _, m := range synthetic() {
		if b, err := m.Pack(); err == nil {
			f.Add(b, uint16(512))
			f.Add(b, uint16(1232))
		}
	}
	// A negative answer, the SOA alone (negativeAgain asks it again).
	nx := withReply("x.example.org.", dns.TypeA, nil,
		rrs("example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300"), nil)
	nx.Rcode = dns.RcodeNameError
	if b, err := nx.Pack(); err == nil {
		f.Add(b, uint16(512))
	}
	// A signed one: the SOA, an NSEC record, and their signatures.
	const sig = " 13 2 300 " + exampleSignature
	nsec := withReply("x.example.org.", dns.TypeA, nil, rrs(
		"example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300",
		"example.org. 3600 IN RRSIG SOA"+sig,
		"w.example.org. 300 IN NSEC y.example.org. A RRSIG NSEC",
		"w.example.org. 300 IN RRSIG NSEC"+sig), nil)
	nsec.Rcode = dns.RcodeNameError
	nsec.SetEdns0(1232, true)
	if b, err := nsec.Pack(); err == nil {
		f.Add(b, uint16(1232))
	}
	e := NewEncoder()
	f.Fuzz(func(t *testing.T, data []byte, size uint16) {
		var m dns.Msg
		if err := m.Unpack(data); err != nil {
			return
		}
		_, err := parity(e, &m, int(size))
		if errors.Is(err, errBothUnreadable) {
			return
		}
		if errors.Is(err, errDeclined) {
			if _, perr := m.Copy().Pack(); perr == nil {
				if _, oerr := e.findOPT(&m); oerr == nil {
					t.Fatalf("declined a message miekg/dns packs: %v\n%s", err, m.String())
				}
			}
			return
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, m.String())
		}
		negativeAgain(t, e, &m, int(size))
	})
}

// negativeAgain asks a negative answer's authority section (its SOA, and
// any signatures and NSEC records after it) again with other questions
// (above, below and beside the first, the SOA's own names, the records'
// owners and names under them), through e, which keeps templates: each
// must be the long way's octets, from a fresh encoder. Each is asked
// twice, so that a section is kept (the second time its slot packs it).
func negativeAgain(t *testing.T, e *Encoder, m *dns.Msg, size int) {
	if len(m.Question) != 1 || len(m.Ns) == 0 {
		return
	}
	soa, ok := m.Ns[0].(*dns.SOA)
	if !ok {
		return
	}
	q := m.Question[0].Name
	names := []string{q, "a." + q, "A." + q, soa.Hdr.Name, "x." + soa.Hdr.Name, soa.Ns, "x." + soa.Ns, soa.Mbox}
	if i, end := dns.NextLabel(q, 0); !end {
		names = append(names, q[i:])
	}
	for _, rr := range m.Ns[1:] {
		names = append(names, rr.Header().Name, "x."+rr.Header().Name)
	}
	for _, name := range names {
		again := *m
		again.Question = []dns.Question{{Name: name, Qtype: m.Question[0].Qtype, Qclass: m.Question[0].Qclass}}
		for range 2 {
			got, err := e.Encode(nil, &again, size)
			want, werr := NewEncoder().Encode(nil, &again, size)
			if (err == nil) != (werr == nil) || string(got) != string(want) {
				t.Fatalf("%s asked again as %q: %v\n got %x\nwant %x (%v)", q, name, err, got, want, werr)
			}
		}
	}
}
