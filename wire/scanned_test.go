package wire

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestScannedIsScanning: two thousand names, four times the slots, each
// the question of a message encoded many times in random order, some at
// new addresses with the same text and some in another case: every
// message has miekg/dns's bytes (a lone name is never compressed), whether
// its name was remembered, evicted by another name in the same slot, or
// new; and with the hashed tables too, where the remembered scan feeds
// hashPlain.
func TestScannedIsScanning(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	names := make([]string, 4*scannedSlots)
	for i := range names {
		var b strings.Builder
		for range 1 + rng.IntN(6) {
			n := 1 + rng.IntN(12)
			for range n {
				b.WriteByte("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_"[rng.IntN(64)])
			}
			b.WriteByte('.')
		}
		names[i] = fmt.Sprintf("%s%d.", b.String(), i)
	}
	for _, hashed := range []bool{false, true} {
		e := NewEncoder()
		if hashed {
			e.names.maxList = 0
		}
		var buf, want []byte
		hits := 0
		for range 8 * len(names) {
			s := names[rng.IntN(len(names))]
			switch rng.IntN(4) {
			case 0:
				s = strings.Clone(s) // the same text at another address
			case 1:
				s = strings.ToUpper(s)
			}
			if remembered(&e.scan, s) {
				hits++
			}
			m := new(dns.Msg)
			m.SetQuestion(s, dns.TypeA)
			var err error
			if buf, err = e.Encode(buf, m, 0); err != nil {
				t.Fatal(err)
			}
			if want, err = m.PackBuffer(want); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(buf, want) {
				t.Fatalf("%s (hashed %v): %x, want %x", s, hashed, buf, want)
			}
		}
		if hits == 0 {
			t.Fatal("nothing was ever remembered: the test tests nothing")
		}
	}
}

// TestScannedRemembersNoError: a name that does not encode fails every
// time and takes no slot; a name with escapes is not remembered either
// (only scanPlain's names are).
func TestScannedRemembersNoError(t *testing.T) {
	e := NewEncoder()
	for _, s := range []string{"no-final-dot.example", "empty..label.", strings.Repeat("x", 64) + ".long."} {
		for range 2 {
			m := new(dns.Msg)
			m.SetQuestion(s, dns.TypeA)
			if _, err := e.Encode(nil, m, 0); err == nil {
				t.Fatalf("%q encoded", s)
			}
		}
		if remembered(&e.scan, s) {
			t.Fatalf("%q, which does not encode, was remembered", s)
		}
	}
	escaped := `a\.b.example.`
	m := new(dns.Msg)
	m.SetQuestion(escaped, dns.TypeA)
	if _, err := e.Encode(nil, m, 0); err != nil {
		t.Fatal(err)
	}
	if remembered(&e.scan, escaped) {
		t.Fatal("a name with escapes was remembered")
	}
}

// remembered says whether c holds the scan of s.
func remembered(c *scanned, s string) bool {
	return c.slotOf(nameKey(s)).name == s
}

// TestScannedSlotKeptForItsMessage: two names of one message that share a
// slot. The message's tables hold the first one's remembered scan, not a
// copy, so the second must not take the slot before the message ends;
// otherwise a later name would be compressed against the wrong text.
func TestScannedSlotKeptForItsMessage(t *testing.T) {
	// Two names of the same length, in one slot.
	var slots scanned // only its slots' addresses are used
	bySlot := map[*scannedSlot]string{}
	for i := range 2000 {
		x := fmt.Sprintf("a%05d.one.example.", i)
		bySlot[slots.slotOf(nameKey(x))] = x
	}
	var a, b string
	for i := 0; i < 2000 && a == ""; i++ {
		y := fmt.Sprintf("b%05d.two.example.", i)
		if x, ok := bySlot[slots.slotOf(nameKey(y))]; ok {
			a, b = x, y
		}
	}
	if a == "" {
		t.Fatal("found no two names in one slot")
	}
	hdr := func(name string, rrtype uint16) dns.RR_Header {
		return dns.RR_Header{Name: name, Rrtype: rrtype, Class: dns.ClassINET, Ttl: 300}
	}
	m := new(dns.Msg)
	m.SetQuestion(a, dns.TypeNS)
	m.Response = true
	m.Answer = []dns.RR{&dns.NS{Hdr: hdr(a, dns.TypeNS), Ns: b}}
	m.Extra = []dns.RR{
		&dns.A{Hdr: hdr("www.one.example.", dns.TypeA), A: []byte{192, 0, 2, 1}},
		&dns.A{Hdr: hdr("www.two.example.", dns.TypeA), A: []byte{192, 0, 2, 2}},
	}
	e := NewEncoder()
	for range 3 {
		if _, err := parity(e, m, 0); err != nil {
			t.Fatal(err)
		}
	}
}

// TestScannedAcrossGenerationWrap: a slot says where the message of its
// generation wrote its name. When the generation counter wraps, an old
// message's generation comes back, and its slots must not be taken for
// the new message's.
func TestScannedAcrossGenerationWrap(t *testing.T) {
	e := NewEncoder()
	first := new(dns.Msg)
	first.SetQuestion("x.example.", dns.TypeA)
	if _, err := parity(e, first, 0); err != nil { // generation 2 writes x.example. at 12
		t.Fatal(err)
	}
	e.names.gen = math.MaxUint32
	other := new(dns.Msg)
	other.SetQuestion("y.example.", dns.TypeA)
	if _, err := parity(e, other, 0); err != nil { // generation 1, after the wrap
		t.Fatal(err)
	}
	again := new(dns.Msg)
	again.SetQuestion("other.example.", dns.TypeNS)
	again.Response = true
	again.Answer = rrs("other.example. 300 IN NS x.example.")
	if _, err := parity(e, again, 0); err != nil { // generation 2 again
		t.Fatal(err)
	}
	if e.names.gen != 2 {
		t.Fatalf("generation %d, want 2: the test missed its mark", e.names.gen)
	}
}
