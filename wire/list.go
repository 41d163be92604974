package wire

import (
	"encoding/binary"
	"math/bits"
	"slices"
)

// A small message's names are compressed without hashing. Most answers
// hold a handful of distinct names (the question, the zone's apex, a few
// targets), and a name not met before cost about 70 ns through the suffix
// table, most of it hashing every suffix and probing for each. Until
// maxListed names are listed, a new name is instead compared, from its
// end, with each listed name's lowercased wire form: the longest common
// run of octets, cut back to a label start in both, is the suffix to point
// at. Then, or when a name comes another way (escapes, a fallback record),
// promote moves every listed name into the suffix table and the message
// goes on as before. Both ways find the same, longest, suffix, and give
// the same bytes (TestListFindsWhatTheTableFinds); the list took 3 to 55%
// off the benchmark's messages (wire's README). The names met whole are
// kept the same way: the first maxListed in order, then a hash table.
const maxListed = 8

// listed is one name written in full or in part: key is its lowercased
// wire form and starts its label starts, in the encoder's arenas or in a
// scan remembered for this message (scanned.go); the suffix from each
// label is at offs[opos:] in the message (noPointer when past the pointer
// limit).
type listed struct {
	key    []byte
	starts []uint8
	opos   uint32
}

// findListed returns, for the name whose lowercased wire form is key,
// with labels starting at labels, the first label whose suffix a listed
// name holds, that suffix's offset, and where it is in the listed name;
// len(labels) when none holds one.
func (t *names) findListed(key []byte, labels []uint8) (cut, target int, from listedSuffix) {
	n := len(key)
	cut = len(labels)
	for i := range t.listed {
		l := &t.listed[i]
		old, starts := l.key, l.starts
		// How many octets key and old end with alike, compared eight at a
		// time from the end (written here: a call per listed name was a
		// tenth of the search).
		common, m := 0, min(n, len(old))
		var x uint64
		for common+8 <= m {
			if x = binary.LittleEndian.Uint64(key[n-common-8:]) ^ binary.LittleEndian.Uint64(old[len(old)-common-8:]); x != 0 {
				break
			}
			common += 8
		}
		if x != 0 {
			common += bits.LeadingZeros64(x) / 8
		} else {
			for common < m && key[n-1-common] == old[len(old)-1-common] {
				common++
			}
		}
		k := 0 // the listed name's labels, walked forward with the new name's
		for j := 0; j < cut; j++ {
			lo := int(labels[j])
			if n-lo > common {
				continue
			}
			at := len(old) - (n - lo) // where that suffix starts in old
			for k < len(starts) && int(starts[k]) < at {
				k++
			}
			if k == len(starts) {
				break
			}
			// Equal octets from a label start of the new name are a label
			// start in the old one too, unless a label of the old one holds
			// octets that read as a length; then a shorter suffix is tried.
			if int(starts[k]) == at {
				if off := t.offs[l.opos+uint32(k)]; off != noPointer {
					cut, target, from = j, int(off), listedSuffix{l.opos, k}
					break
				}
			}
		}
		if cut == 0 {
			break
		}
	}
	return cut, target, from
}

// list adds the name just written at start (its lowercased wire form
// key, its labels starting at labels) whose labels before cut are written
// out and whose suffix from cut is the one findListed found (from); from
// is ignored when cut is len(labels). A name written as one pointer (cut
// 0) adds nothing: the listed name it points into holds all its suffixes.
// kept says that key and labels stay as they are for the whole message
// (a remembered scan's); otherwise they are copied.
func (t *names) list(key []byte, labels []uint8, kept bool, cut, start int, from listedSuffix) {
	nl := len(labels)
	if !kept {
		k, s := len(t.keys), len(t.starts)
		t.keys = append(t.keys, key...)
		t.starts = append(t.starts, labels...)
		key, labels = t.keys[k:], t.starts[s:]
	}
	// The offsets are stored into room made once: appended one by one,
	// each waited on the slice header stored by the one before.
	opos := len(t.offs)
	t.offs = slices.Grow(t.offs, nl)[:opos+nl]
	offs := t.offs[opos:]
	for j := 0; j < cut; j++ {
		off := start + int(labels[j])
		if off >= maxPointer {
			off = noPointer
		}
		offs[j] = uint16(off)
	}
	if cut < nl {
		copy(offs[cut:], t.offs[from.opos+uint32(from.label):])
	}
	// Field by field, as in addWhole.
	t.listed = append(t.listed, listed{})
	l := &t.listed[len(t.listed)-1]
	l.key, l.starts, l.opos = key, labels, uint32(opos)
}

// listedSuffix names one label of a listed name.
type listedSuffix struct {
	opos  uint32
	label int
}

// promote registers every suffix of every listed name in the suffix table,
// which serves the rest of the message. It uses the scratch of index, so
// it runs before a name is scanned.
func (t *names) promote() {
	if t.hashed {
		return
	}
	t.hashed = true
	for _, l := range t.listed {
		// The suffix table's keys live in its arena.
		kpos := len(t.keys)
		t.keys = append(t.keys, l.key...)
		nl := t.index(l.key)
		for j := 0; j < nl; j++ {
			off := t.offs[l.opos+uint32(j)]
			if off == noPointer {
				continue
			}
			lo := int(t.labels[j])
			t.addSuffix(kpos+lo, len(l.key)-lo, t.hashes[j], int(off))
		}
	}
}
