package zonestore

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"
	"unsafe"

	"github.com/miekg/dns"
)

// TestKeyMatchesMiekg: appendKey gives the bytes of dns.PackDomainName, lowercased.
func TestKeyMatchesMiekg(t *testing.T) {
	for _, name := range []string{".", "example.org.", "WWW.Example.ORG.", `weird\.label.example.`, `\065bc.example.`,
		`sp\032ace.example.`, `a\\b.example.`, `\000.example.`, "*.wild.example.", "noroot.example",
		strings.Repeat("a", 63) + ".example.", "xn--bcher-kva.example."} {
		got, err := appendKey(nil, name)
		if err != nil {
			t.Fatalf("%q: %v", name, err)
		}
		buf := make([]byte, 256)
		n, err := dns.PackDomainName(dns.Fqdn(name), buf, 0, nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if want := bytes.ToLower(buf[:n]); !bytes.Equal(got, want) {
			t.Errorf("%q: got % x, want % x", name, got, want)
		}
	}
	for _, bad := range []string{"a..b.", strings.Repeat("a", 64) + ".", `\256.`, `a\`, strings.Repeat("abcdefghi.", 26)} {
		if k, err := appendKey(nil, bad); err == nil {
			t.Errorf("%q: got % x, want an error", bad, k)
		}
	}
}

func TestSortKeyIsCanonicalOrder(t *testing.T) {
	// RFC 4034 section 6.1's example, in order.
	names := []string{"example.", "a.example.", "yljkjljk.a.example.", "Z.a.example.", "zABC.a.EXAMPLE.",
		"z.example.", `\001.z.example.`, "*.z.example.", `\200.z.example.`}
	for i := 1; i < len(names); i++ {
		a, _ := key(names[i-1])
		b, _ := key(names[i])
		if bytes.Compare(appendSortKey(nil, a), appendSortKey(nil, b)) >= 0 {
			t.Errorf("%q does not sort before %q", names[i-1], names[i])
		}
	}
}

// TestSortKeyOrdersZeroOctets: a label's zero octets, which its sort key
// escapes, sort as RFC 4034 orders octets: below every other, a label
// before its extensions, and a name before its descendants.
func TestSortKeyOrdersZeroOctets(t *testing.T) {
	names := []string{"example.", "a.example.", `b.a.example.`, `\000.b.a.example.`, `a\000.example.`, `x.a\000.example.`,
		`a\000\000.example.`, `a\000\001.example.`, `a\001.example.`, `a\001\000.example.`, `ab.example.`, `\000a.ab.example.`}
	for i := 1; i < len(names); i++ {
		a, _ := key(names[i-1])
		b, _ := key(names[i])
		if bytes.Compare(appendSortKey(nil, a), appendSortKey(nil, b)) >= 0 {
			t.Errorf("%q does not sort before %q", names[i-1], names[i])
		}
	}
}

func BenchmarkKey(b *testing.B) {
	var buf [256]byte
	b.ReportAllocs()
	for b.Loop() {
		appendKey(buf[:0], "host12345.d45.Example.ORG.")
	}
}

// TestPlainKeyIsEscapedKey: the word-at-a-time path gives the bytes of the
// octet-at-a-time one for 200,000 random names without escapes (mixed
// case, with and without the final dot, after a prefix already in dst),
// and declines exactly the names the other refuses (empty and long
// labels, long names).
func TestPlainKeyIsEscapedKey(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	const alphabet = "abcXYZ019-_*.@[`{\x80\xFF"
	declined := 0
	for range 200000 {
		var b strings.Builder
		switch rng.IntN(3) {
		case 0: // labels of a usual size
			for range 1 + rng.IntN(5) {
				for range 1 + rng.IntN(12) {
					b.WriteByte(alphabet[rng.IntN(len(alphabet)-1)])
				}
				b.WriteByte('.')
			}
		case 1: // anything, dots included, up to past the longest name
			for range rng.IntN(300) {
				b.WriteByte(alphabet[rng.IntN(len(alphabet))])
			}
		default: // long labels and names near the limits
			for range 1 + rng.IntN(6) {
				b.WriteString(strings.Repeat("a", 40+rng.IntN(30)))
				b.WriteByte('.')
			}
		}
		name := b.String()
		if rng.IntN(3) == 0 {
			name = strings.TrimSuffix(name, ".")
		}
		if name == "" || name == "." {
			continue
		}
		prefix := []byte("pre")[:rng.IntN(4)]
		want, werr := appendEscapedKey(append([]byte(nil), prefix...), name)
		got, ok := appendPlainKey(append([]byte(nil), prefix...), name)
		if ok != (werr == nil) {
			t.Fatalf("%q: plain path ok %v, escaped path error %v", name, ok, werr)
		}
		if !ok {
			declined++
			continue
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("%q:\n got % x\nwant % x", name, got, want)
		}
	}
	if declined == 0 {
		t.Fatal("no name was declined: the test does not reach the errors")
	}
}

// TestNameKeyedCopiesTheKey: a name made from another's key has the same
// key and text, its key now in the room given; a room too small gets a
// copy of its own, and the key made before is not what it reads.
func TestNameKeyedCopiesTheKey(t *testing.T) {
	var first [128]byte
	n, err := NewNameIn("WWW.Example.ORG.", first[:])
	if err != nil {
		t.Fatal(err)
	}
	var room [128]byte
	m := NewNameKeyed(n.text, n.Key(), room[:])
	clear(first[:]) // the stack room is gone
	if m.Key() != "\x03www\x07example\x03org\x00" || m.text != n.text {
		t.Fatalf("key %q, text %q", m.Key(), m.text)
	}
	if unsafe.StringData(m.Key()) != &room[0] {
		t.Errorf("the key is not in the room given")
	}
	small := NewNameKeyed(m.text, m.Key(), make([]byte, 4))
	if n, _ := NewName("WWW.Example.ORG."); small.Key() != n.Key() {
		t.Errorf("in a room too small: key %q, want %q", small.Key(), n.Key())
	}
}
