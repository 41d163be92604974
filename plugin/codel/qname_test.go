package codel

import (
	"math/rand/v2"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
)

// TestUnpackNameIsMiekg: for 300,000 wire names (plain labels, labels with
// every octet miekg/dns escapes, compression pointers, reserved bits,
// names cut short, names near and past 255 octets, the root), at an
// offset after some header octets, unpackName gives dns.UnpackDomainName's
// name, offset and error.
func TestUnpackNameIsMiekg(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	plainSeen, fallbackSeen := 0, 0
	names, made := new(nameRoom), [][2]string(nil)
	for range 300000 {
		m := make([]byte, 12, 300)
		for i := range m {
			m[i] = byte(rng.Uint32())
		}
		labels := rng.IntN(8)
		if rng.IntN(10) == 0 {
			labels = 3 + rng.IntN(6) // with long labels below, past 255 octets
		}
		special := rng.IntN(4) == 0
		for range labels {
			n := 1 + rng.IntN(12)
			if rng.IntN(8) == 0 {
				n = 40 + rng.IntN(24)
			}
			m = append(m, byte(n))
			for range n {
				const plain = "abcXYZ019-_*"
				c := plain[rng.IntN(len(plain))]
				if special && rng.IntN(6) == 0 {
					const escaped = ".'@;()\"\\ \x00\x1F\x7F\x80\xFF"
					c = escaped[rng.IntN(len(escaped))]
				}
				m = append(m, c)
			}
		}
		switch rng.IntN(10) {
		case 0: // a compression pointer, back into the header or the name
			m = append(m, 0xC0, byte(rng.IntN(len(m))))
		case 1: // reserved bits
			m = append(m, 0x40|byte(rng.IntN(64)))
		case 2: // cut short
			m = m[:12+rng.IntN(len(m)-11)]
		default:
			m = append(m, 0)
		}
		m = append(m, 0, 1, 0, 1) // the question's type and class after it
		wantName, wantOff, wantErr := dns.UnpackDomainName(m, 12)
		room := names // mostly made in one room, as a worker's names are
		if rng.IntN(8) == 0 {
			room = nil
		}
		gotName, gotOff, gotErr := unpackName(m, 12, room)
		made = append(made, [2]string{gotName, wantName})
		if gotName != wantName || gotOff != wantOff || (gotErr == nil) != (wantErr == nil) ||
			(gotErr != nil && gotErr.Error() != wantErr.Error()) {
			t.Fatalf("% x:\n got %q, %d, %v\nwant %q, %d, %v", m, gotName, gotOff, gotErr, wantName, wantOff, wantErr)
		}
		if plainName(m) {
			plainSeen++
		} else {
			fallbackSeen++
		}
	}
	// A name once made never changes, however many are made after it in
	// the same room.
	for _, n := range made {
		if n[0] != n[1] {
			t.Fatalf("a name made as %q is now %q", n[1], n[0])
		}
	}
	if plainSeen < 1000 || fallbackSeen < 1000 {
		t.Fatalf("%d plain names and %d others: the test does not reach both ways", plainSeen, fallbackSeen)
	}
}

// plainName says whether the name at m[12:] is one unpackName reads itself:
// plain labels ending in the root, within 255 octets.
func plainName(m []byte) bool {
	at, budget := 12, 255
	for at < len(m) {
		c := int(m[at])
		if c == 0 {
			return true
		}
		if c > 63 || at+1+c > len(m) {
			return false
		}
		if budget -= c + 1; budget <= 0 {
			return false
		}
		for _, b := range m[at+1 : at+1+c] {
			if !plainOctet[b] {
				return false
			}
		}
		at += 1 + c
	}
	return false
}

// BenchmarkUnpackName reads the questions of the load test's query mix,
// beside dns.UnpackDomainName on the same, its names made in a worker's
// room.
func BenchmarkUnpackName(b *testing.B) {
	var packed [][]byte
	room := new(nameRoom)
	for _, q := range workload.Queries(50000, 4096) {
		m := new(dns.Msg)
		m.SetQuestion(q.Name, dns.StringToType[q.Type])
		p, err := m.Pack()
		if err != nil {
			b.Fatal(err)
		}
		packed = append(packed, p)
	}
	for _, c := range []struct {
		name   string
		unpack func([]byte, int) (string, int, error)
	}{{"unpackName", func(m []byte, off int) (string, int, error) { return unpackName(m, off, room) }},
		{"UnpackDomainName", dns.UnpackDomainName}} {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if _, _, err := c.unpack(packed[i%len(packed)], 12); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
