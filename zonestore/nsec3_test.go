package zonestore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestNSEC3HashIsHashName: a name's NSEC3 hash, taken from its wire key,
// is what dns.HashName makes of its presentation, for names with escapes,
// wildcards and mixed case, salts empty, short and of 255 octets, and
// iterations from none to many; a salt that is no hex hashes to nothing
// either way.
func TestNSEC3HashIsHashName(t *testing.T) {
	names := []string{"example.org.", "*.a.example.org.", `a\.b.example.org.`, `\200x.example.`, "WWW.Example.ORG.", ".", `x\000y.z.`, strings.Repeat("a", 63) + ".example."}
	salts := []string{"", "AABBCCDD", strings.Repeat("ab", 255), "not hex"}
	for _, salt := range salts {
		for _, iter := range []uint16{0, 1, 10, 150} {
			z := &Zone{n3p: &dns.NSEC3PARAM{Hash: dns.SHA1, Iterations: iter, Salt: salt}}
			z.n3salt = saltOf(z.n3p)
			for _, name := range names {
				k, err := key(name)
				if err != nil {
					t.Fatalf("%s: %v", name, err)
				}
				if got, want := z.hash(k), dns.HashName(name, dns.SHA1, iter, salt); got != want {
					t.Errorf("%s, salt %.8s, %d iterations: hash %q, want HashName's %q", name, salt, iter, got, want)
				}
			}
		}
	}
	z := &Zone{n3p: &dns.NSEC3PARAM{Hash: 2, Salt: ""}} // no such algorithm
	z.n3salt = saltOf(z.n3p)
	if got := z.hash("\x07example\x00"); got != "" {
		t.Errorf("an unknown algorithm: hash %q, want none", got)
	}
}

// hashLabel is a label of n characters of base32hex, drawn from r, as an
// NSEC3 hash label is spelled.
func hashLabel(r *rand.Rand, n int) string {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUV"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

// TestNSEC3SearchIsSortSearch: the first NSEC3 at or after a hash, found
// through its bucket and the array of prefixes, is the one sort.Search
// finds among the labels: for hashes of the chain, between them, before
// the first and after the last, and among labels that share their first
// eight octets, are shorter, or hold characters no hash does (a zone's
// owner names need not be hashes).
func TestNSEC3SearchIsSortSearch(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	label := func(n int) string { return hashLabel(r, n) }
	var hashes []string
	for range 2000 {
		hashes = append(hashes, label(32))
	}
	for range 50 { // a shared prefix of eight, and labels shorter than it
		p := label(8)
		hashes = append(hashes, p+label(24), p+label(24), p, p[:3], p+"0")
	}
	odd := func() string { // a character no hash holds, either side of each range
		return string("\x00!/:@[Wa\xff"[r.IntN(9)])
	}
	for range 100 {
		hashes = append(hashes, label(r.IntN(4))+odd()+label(r.IntN(4)))
	}
	slices.Sort(hashes)
	hashes = slices.Compact(hashes)
	z := &Zone{}
	for _, h := range hashes {
		z.nsec3 = append(z.nsec3, &nsec3Node{hash: h})
	}
	if i := z.nsec3At("ABC"); i != 0 { // before the chain is indexed: an empty one
		t.Fatalf("no chain: at %d", i)
	}
	z.indexNSEC3()
	if n := len(z.nsec3Buckets.start); n != 1<<12+1 {
		t.Fatalf("%d labels in %d buckets, want 4,097 (some with several)", len(hashes), n)
	}
	probes := append([]string{"", "0", "00000000000000000000000000000000", "VVVVVVVVVVVVVVVVVVVVVVVVVVVVVVVV", "W"}, hashes...)
	for _, h := range hashes {
		probes = append(probes, h+"0", h[:len(h)-1], h[:min(8, len(h))]+label(24))
	}
	for range 2000 {
		probes = append(probes, label(32), label(r.IntN(4))+odd()+label(r.IntN(30)))
	}
	for _, h := range probes {
		want := sort.Search(len(z.nsec3), func(i int) bool { return z.nsec3[i].hash >= h })
		if got := z.nsec3At(h); got != want {
			t.Fatalf("%q: at %d, want %d (%v)", h, got, want, fmt.Sprint(hashes[max(0, want-2):min(len(hashes), want+2)]))
		}
		found := z.findNSEC3(h)
		if in := slices.Contains(hashes, h); (found != nil) != in || found != nil && found.hash != h {
			t.Fatalf("%q: found %v, in the chain %v", h, found, in)
		}
	}
}
