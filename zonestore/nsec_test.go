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
		for i := range 300 { // many sharing their first eight: the search gallops through them
			names = append(names, under(fmt.Sprintf("customer-%03d", i)))
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

// TestApexWildcardCoverIsFoundAgain: the NSEC and NSEC3 records that
// cover the apex's wildcard, found when a version is built, are those a
// search finds, and an edit that puts a record between finds it: the
// proof a name under the apex does not exist names it.
func TestApexWildcardCoverIsFoundAgain(t *testing.T) {
	rr := func(s string) dns.RR { return mustRR(t, s) }
	signed, err := ParseFile("../testdata/zones/signed.test.zone", "signed.test")
	if err != nil {
		t.Fatal(err)
	}
	if want := signed.coverNSEC(wildcardKey(signed.apex.key)); signed.apexWildcard == nil || signed.apexWildcard != want {
		t.Fatalf("signed.test: the apex's wildcard covered by %v, want %v", signed.apexWildcard, want)
	}
	// "\000" sorts after the apex and before "*": its NSEC covers the wildcard now.
	b := signed.Edit()
	must(t, b.Add(rr(`\000.signed.test. 300 IN NSEC tlsa._443._tcp.signed.test. A RRSIG NSEC`), 0))
	must(t, b.Add(rr(`\000.signed.test. 300 IN RRSIG NSEC 13 3 300 20460101000000 20260101000000 7260 signed.test. Ddvut133NDa3cevcO1Ir/qV0WeBmnf+Cs6BAn5Wey6BseijkIkPQ4kgCgy75xbDPE8hsgKzbHjjUben9B80tJg==`), 0))
	must(t, b.Add(rr(`\000.signed.test. 300 IN A 192.0.2.99`), 0))
	next, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if n := next.apexWildcard; n == nil || n.key != mustKey(t, `\000.signed.test.`) || n != next.coverNSEC(wildcardKey(next.apex.key)) {
		t.Fatalf("after the edit, the apex's wildcard covered by %v, want \\000.signed.test.'s", n)
	}
	if signed.apexWildcard == next.apexWildcard {
		t.Fatal("the version before the edit changed its cover")
	}
	res := next.Lookup("nothere-at-all.signed.test.", dns.TypeA, true)
	found := false
	for _, x := range res.Ns {
		found = found || x.Header().Name == `\000.signed.test.` && x.Header().Rrtype == dns.TypeNSEC
	}
	if !found {
		t.Fatalf("a name under the apex denied with %v, want the new NSEC among them", res.Ns)
	}

	z3, err := ParseFile("../testdata/zones/nsec3.test.zone", "nsec3.test")
	if err != nil {
		t.Fatal(err)
	}
	if want := z3.coverWildcard(z3.apex.key); z3.apexWildcard3 == nil || z3.apexWildcard3 != want {
		t.Fatalf("nsec3.test: the apex's wildcard covered by %v, want %v", z3.apexWildcard3, want)
	}
	// An NSEC3 record whose hash sorts just before the wildcard's covers it now.
	h := []byte(z3.hash(wildcardKey(z3.apex.key)))
	h[len(h)-1]--
	owner := string(h) + ".nsec3.test."
	b3 := z3.Edit()
	must(t, b3.Add(rr(owner+` 300 IN NSEC3 1 1 0 CAFE `+string(h)+` A RRSIG`), 0))
	must(t, b3.Add(rr(owner+` 300 IN RRSIG NSEC3 13 3 300 20460101000000 20260101000000 36357 nsec3.test. gTCeooBpax/WyofFWVcGSl076eQqc13WyjPJSrlyOev4UuTf+6MRD6Rq9+xGCm966p4JKujjqAbizIOhC/W6pw==`), 0))
	next3, err := b3.Build()
	if err != nil {
		t.Fatal(err)
	}
	if n := next3.apexWildcard3; n == nil || n.hash != string(h) || n != next3.coverWildcard(next3.apex.key) {
		t.Fatalf("after the edit, the apex's wildcard covered by %v, want %s's", n, h)
	}
	res = next3.Lookup("nothere-at-all.nsec3.test.", dns.TypeA, true)
	found = false
	for _, x := range res.Ns {
		found = found || strings.EqualFold(x.Header().Name, owner) && x.Header().Rrtype == dns.TypeNSEC3
	}
	if !found {
		t.Fatalf("a name under the apex denied with %v, want the new NSEC3 among them", res.Ns)
	}
}
