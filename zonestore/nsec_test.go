package zonestore

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"
)

// TestNSECSearchIsSortSearch: the first node of an NSEC chain whose sort
// key sorts after a name's, found through the array of prefixes, is the
// one sort.Search finds among the keys: for names of the chain, names
// between them, before the first and after the last, names that share
// their first eight octets after the origin's or are shorter, labels
// holding zero octets (escaped in sort keys), and names outside the zone.
func TestNSECSearchIsSortSearch(t *testing.T) {
	for _, origin := range []string{"example.org.", "a\\000b.example.", "."} {
		r := rand.New(rand.NewPCG(1, 2))
		tokens := strings.Split("a b c d e f g h i j k l m n o p q r s t u v w x y z 0 1 2 3 9 - * \\000 \\255", " ")
		label := func(n int) string {
			var b strings.Builder
			for range n {
				b.WriteString(tokens[r.IntN(len(tokens))])
			}
			return b.String()
		}
		child := func(label, of string) string {
			if of == "." {
				return label + "."
			}
			return label + "." + of
		}
		under := func(label string) string { return child(label, origin) }
		sortKey := func(name string) string {
			k, err := key(name)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			return string(appendSortKey(nil, k))
		}
		names := []string{origin}
		for range 1500 {
			names = append(names, under(label(1+r.IntN(12))))
		}
		for range 60 { // a shared first eight, shorter names, children
			p := "customer"[:1+r.IntN(8)] + label(r.IntN(3))
			names = append(names, under(p), under(p+label(4)), under(p+label(4)), under(label(3)+"."+p), under(p+"-"))
		}
		z := &Zone{originKey: mustKey(t, origin)}
		z.nsecOrigin = string(appendSortKey(nil, z.originKey))
		var keys []string
		for _, n := range names {
			keys = append(keys, sortKey(n))
		}
		slices.Sort(keys)
		keys = slices.Compact(keys)
		for _, k := range keys {
			z.nsec = append(z.nsec, &node{sortKey: k})
			z.nsecPrefix = append(z.nsecPrefix, z.nsecPrefixOf(k))
		}
		if a, b := z.nsecPrefixOf(sortKey(under("a"))), z.nsecPrefixOf(sortKey(under("b"))); a == b {
			t.Fatalf("origin %s: a and b below it have one prefix, %x: the prefix is not what follows the origin", origin, a)
		}
		probes := []string{sortKey(origin), sortKey(under("zzzzzzzzzzzzzzzz")), sortKey(under("0")), sortKey("example.net."), sortKey("com."), ""}
		probes = append(probes, keys...)
		for _, n := range names {
			probes = append(probes, sortKey(child(label(2), n)), sortKey(child("x", n)))
			if origin != "." {
				probes = append(probes, sortKey(n+"x.")) // outside the zone
			}
		}
		for range 1500 {
			probes = append(probes, sortKey(under(label(1+r.IntN(12)))))
		}
		for _, sk := range probes {
			want := sort.Search(len(z.nsec), func(i int) bool { return z.nsec[i].sortKey > sk })
			if got := z.nsecAfter(sk); got != want {
				t.Fatalf("origin %s, %q: at %d, want %d", origin, sk, got, want)
			}
		}
	}
}
