package zonestore

import "math/bits"

// NSEC3 hash labels are SHA-1 digests in base32hex, spread evenly over
// their range, so a label's first characters say, within a record or two,
// where it sorts among a chain's. hashBuckets maps each leading sketch
// of a label to the part of the chain that shares it; the search for a
// name that does not exist (every query of a random-subdomain flood) then
// reads one bucket and the few records in it, where a binary search
// over the chain's prefixes took its seventeen steps, most of them cache
// misses: 2.5% of such a flood's time (bench/README.md, 2026-12-06).
type hashBuckets struct {
	// start[b] is the index of the chain's first label whose bucket is b
	// or after it; start[len(start)-1] is the chain's length.
	start []uint32
	shift uint // sketch >> shift is a bucket
}

// sketchBits is how many bits hashSketch keeps: four characters' worth,
// a million buckets, enough for a chain of a million records to hold
// about one a bucket.
const sketchBits = 20

// hashSketch is a number for the label h that never decreases as labels
// sort: the base32hex values of its first four characters, five bits
// each. A label's characters need not be base32hex (a zone's owners are
// whatever it says): a character below '0' counts as the smallest value
// and the rest of the sketch as zeros, one between '9' and 'A' as 9 and
// the rest as ones, one past 'V' as 31 and the rest as ones; a label
// shorter than four counts its missing characters as zeros. Each keeps
// the order: every label that starts the same way but for such a
// character sorts on the same side of the others.
func hashSketch(h string) uint32 {
	var v uint32
	for j := range 4 {
		rest := uint(5 * (3 - j)) // the bits after this character's
		if j >= len(h) {
			return v << (rest + 5)
		}
		switch c := h[j]; {
		case c < '0':
			return v << (rest + 5)
		case c <= '9':
			v = v<<5 | uint32(c-'0')
		case c < 'A':
			return (v<<5|9)<<rest | (1<<rest - 1)
		case c <= 'V':
			v = v<<5 | uint32(c-'A'+10)
		default:
			return (v<<5|31)<<rest | (1<<rest - 1)
		}
	}
	return v
}

// newHashBuckets returns the buckets of a chain of n labels, the ith
// label(i), sorted: about as many buckets as labels, at most 2^sketchBits.
func newHashBuckets(n int, label func(i int) string) hashBuckets {
	b := uint(bits.Len(uint(n)))
	b = min(max(b, 1), sketchBits)
	hb := hashBuckets{start: make([]uint32, 1<<b+1), shift: sketchBits - b}
	i := 0
	for bucket := range hb.start {
		for i < n && int(hashSketch(label(i))>>hb.shift) < bucket {
			i++
		}
		hb.start[bucket] = uint32(i)
	}
	return hb
}

// span returns the part of the chain, [lo, hi), whose labels share h's
// bucket: every label before lo sorts before h, every one from hi on
// after it.
func (hb *hashBuckets) span(h string) (lo, hi int) {
	if len(hb.start) == 0 { // no chain
		return 0, 0
	}
	b := hashSketch(h) >> hb.shift
	return int(hb.start[b]), int(hb.start[b+1])
}
