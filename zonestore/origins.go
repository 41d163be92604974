package zonestore

import (
	"hash/maphash"
	"iter"
	"math/bits"
	"unsafe"
)

// The store finds a name's zone in a hash table of its zones' origins,
// where it used a Go map. A lookup is much the same either way: a probe
// for each of the name's suffixes, the longest first, until an origin
// matches (the table's only for suffixes as deep as some origin: below).
// But a map's place for
// a key is the runtime's secret, and the table's is computed from the key
// alone, so that codel's warming can fetch the places of a query's every
// suffix at once, then the slot the longest match picks, then its zone,
// while the queries before it are served (Store.Warm), as it fetches a
// zone's own index for the name. Among 100,000 small zones the map's
// lookups in the warming, each waiting on lines no cache held, were 13%
// of a looked-up query's CPU (bench/README.md, 2026-12-06).
//
// The table is of buckets of four slots, each an origin's 64-bit hash and
// its slot, one cache line a bucket: a search reads the bucket its hash
// picks, and the next only where that one is full, which at a quarter to
// a half full is rare. Linear probing slot by slot read as few lines,
// but where its search ended was a branch the CPU could not predict: a
// name's three suffixes among 1,000 origins in the caches took 53 ns,
// where the map took 30; the buckets, their four hashes compared without
// a branch, 37. A search probes only the suffixes of as many labels as
// some origin has (suffixes): among zones all two labels deep, one probe
// for a name of any depth. Not warmed, finding a name's zone then costs
// less than the map's lookup a label did among 1,000 and 100,000 zones
// (BenchmarkFind: 0.87x and 0.75x), more among a million (1.25x); warmed,
// a server of 100,000 zones answered 1.12x to 1.13x the queries a second
// that it answered with the map, of a million 1.21x (bench/README.md).
//
// The table is built whole when zones come or go, as the map was copied
// whole (a directory's zones come together: PublishAll), and only read
// after: readers load it with one atomic load and write nothing.
type origins struct {
	buckets []originBucket // a power of two of them, at most half full
	mask    uint64
	n       int // the origins held
	// The fewest and the most labels of an origin held: a search for a
	// name's zone probes only its suffixes of as many labels as some
	// origin has (suffixes), so that among zones that are all one level
	// below a TLD, say, a name's zone is one probe away, not one a label.
	fewest, most int
}

// originBucket is filled from its first slot: a bucket whose last slot is
// empty ends every search that reaches it.
type originBucket [4]originSlot

type originSlot struct {
	hash uint64 // 0: empty (originHash never returns 0)
	sl   *slot
}

// originSeed hashes every store's origins: a hash only picks the slot
// whose key is then compared.
var originSeed = maphash.MakeSeed()

// originHash is k's hash among origins, never 0.
func originHash(k string) uint64 { return maphash.String(originSeed, k) | 1 }

// home is the bucket where the search for hash h begins: from the bits
// above the one originHash sets (as index.home).
func (o *origins) home(h uint64) uint64 { return h >> 1 & o.mask }

// newOrigins returns the table of the n slots sls yields; no two may
// share a key.
func newOrigins(n int, sls iter.Seq[*slot]) *origins {
	size := 1
	for 4*size < 2*n {
		size *= 2
	}
	o := &origins{buckets: make([]originBucket, size), mask: uint64(size - 1), fewest: maxName}
	for sl := range sls {
		labels := labelCount(sl.key)
		o.fewest, o.most = min(o.fewest, labels), max(o.most, labels)
		h := originHash(sl.key)
		for b := o.home(h); ; b = (b + 1) & o.mask {
			if j := o.buckets[b].free(); j >= 0 {
				o.buckets[b][j] = originSlot{h, sl}
				break
			}
		}
		o.n++
	}
	return o
}

// free is the first empty slot of the bucket, or -1.
func (bk *originBucket) free() int {
	for j := range bk {
		if bk[j].hash == 0 {
			return j
		}
	}
	return -1
}

// get returns the slot of the origin with key k, or nil.
func (o *origins) get(k string) *slot {
	h := originHash(k)
	for b := o.home(h); ; b = (b + 1) & o.mask {
		bk := &o.buckets[b]
		for m := bk.match(h); m != 0; m &= m - 1 {
			if sl := bk[bits.TrailingZeros8(m)].sl; sl.key == k {
				return sl
			}
		}
		if bk[len(bk)-1].hash == 0 {
			return nil
		}
	}
}

// match is a bit for each slot of the bucket whose hash is h, compared
// all four without a branch (which slot holds an origin, if any does, is
// as good as random).
func (bk *originBucket) match(h uint64) uint8 {
	return b2u(bk[0].hash == h) | b2u(bk[1].hash == h)<<1 | b2u(bk[2].hash == h)<<2 | b2u(bk[3].hash == h)<<3
}

// b2u is 1 for true, 0 for false (a SETcc, not a branch).
func b2u(b bool) uint8 {
	var u uint8
	if b {
		u = 1
	}
	return u
}

// likely returns the first slot whose hash is h: the slot of the origin
// hashed, unless another shares its hash (a warming's guess; a lookup
// compares keys). nil when no origin has hash h.
func (o *origins) likely(h uint64) *slot {
	for b := o.home(h); ; b = (b + 1) & o.mask {
		bk := &o.buckets[b]
		if m := bk.match(h); m != 0 {
			return bk[bits.TrailingZeros8(m)].sl
		}
		if bk[len(bk)-1].hash == 0 {
			return nil
		}
	}
}

// suffixes returns the longest suffix of the name whose key is k that
// has as many labels as some origin held, and how many suffixes a search
// for its zone probes from it, each the parent of the one before (none
// where the name is shallower than every origin). Not an iterator: a key
// on its caller's stack that a closure captured would be moved to the heap.
func (o *origins) suffixes(k string) (string, int) {
	n := labelCount(k)
	for ; n > o.most; n-- {
		k = parentKey(k)
	}
	return k, max(n-o.fewest+1, 0)
}

// line is the address of the bucket where a search for hash h begins.
func (o *origins) line(h uint64) uintptr {
	return uintptr(unsafe.Pointer(&o.buckets[o.home(h)]))
}

// all yields every slot, in no order.
func (o *origins) all() iter.Seq[*slot] {
	return func(yield func(*slot) bool) {
		for b := range o.buckets {
			for _, s := range o.buckets[b] {
				if s.hash != 0 && !yield(s.sl) {
					return
				}
			}
		}
	}
}
