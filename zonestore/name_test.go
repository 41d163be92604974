package zonestore

import (
	"bytes"
	"strings"
	"testing"

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

func BenchmarkKey(b *testing.B) {
	var buf [256]byte
	b.ReportAllocs()
	for b.Loop() {
		appendKey(buf[:0], "host12345.d45.Example.ORG.")
	}
}
