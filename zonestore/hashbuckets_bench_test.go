package zonestore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
)

// BenchmarkNSEC3Search finds where random hashes sort in chains of 50,000
// and 2,000,000 NSEC3 records: through the buckets (nsec3At), and by a
// binary search over the whole array of prefixes, as before them.
func BenchmarkNSEC3Search(b *testing.B) {
	r := rand.New(rand.NewPCG(1, 2))
	label := func() string { return hashLabel(r, 32) }
	probes := make([]string, 1<<16)
	for i := range probes {
		probes[i] = label()
	}
	for _, n := range []int{50_000, 2_000_000} {
		hashes := make([]string, n)
		for i := range hashes {
			hashes[i] = label()
		}
		slices.Sort(hashes)
		z := &Zone{}
		for _, h := range hashes {
			z.nsec3 = append(z.nsec3, &nsec3Node{hash: h})
		}
		z.indexNSEC3()
		sink := 0
		b.Run(fmt.Sprintf("%d/buckets", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				sink += z.nsec3At(probes[i&(len(probes)-1)])
			}
		})
		b.Run(fmt.Sprintf("%d/binary", n), func(b *testing.B) {
			for i := 0; b.Loop(); i++ {
				h := probes[i&(len(probes)-1)]
				sink += searchPrefixed(z.nsec3Prefix, prefix8(h), func(i int) bool { return z.nsec3[i].hash >= h })
			}
		})
		if sink == 0 {
			b.Fatal("nothing found")
		}
	}
}
