package zonestore

import (
	"hash/maphash"
	"slices"
	"unsafe"

	"github.com/ontimedns/ontime/internal/yield"
)

// A zone of many names finds a name's node through an index of its own
// beside the map of its nodes: an open-addressing table of each name's
// 64-bit hash and node, 16 octets a slot. Where the map's slot for a name
// is the runtime's secret, the index's is computed from the name alone: a
// server that knows which queries come next has the CPU fetch their
// slots, then their nodes, while it serves the ones before them
// (Store.Warm, warm.go). A name that is not warmed costs a little more
// through the index than through the map (26 against 19 ns in the caches;
// bench/README.md, the log): the index is for warming.
//
// A zone of fewer names has neither the table nor the map: its names are
// one short array (few.go), which warming follows in the table's place,
// and which a million such zones carry in less room than their maps took.

// indexMin is the fewest names for which a zone has an index.
const indexMin = 32

// index maps each key of a zone to its node. Its slots are kept in pages,
// so that an edit copies only the pages it writes and shares the rest
// with the version it was made from, as it shares the nodes it did not
// touch: a 170,000-name zone's index is 8 MiB, and copying it whole took
// an edit of six names from 20 to 45 ms, and 1,000 of them under load
// from 28 to 131 s (BenchmarkEdit170k, TestSwapUnderLoad). Built with
// the zone and only read after.
type index struct {
	seed  maphash.Seed
	pages [][]indexSlot // pageSize slots each (all of them in one, for a smaller table)
	mask  uint64        // the slots are a power of two, at most half full
}

// pageBits sizes a page: 4,096 slots, 64 KiB.
const (
	pageBits = 12
	pageSize = 1 << pageBits
)

type indexSlot struct {
	hash uint64 // 0: empty (hashOf never returns 0)
	n    *node
}

// slot is the slot at i.
func (x *index) slot(i uint64) *indexSlot { return &x.pages[i>>pageBits][i&(pageSize-1)] }

// newIndex returns the index of nodes, or nil for too few of them,
// ticking pace for each.
func newIndex(nodes map[string]*node, pace *yield.Pacer) *index {
	if len(nodes) < indexMin {
		return nil
	}
	size := 8
	for size < 2*len(nodes) {
		size *= 2
	}
	x := &index{seed: maphash.MakeSeed(), mask: uint64(size - 1)}
	for range max(size/pageSize, 1) {
		x.pages = append(x.pages, make([]indexSlot, min(size, pageSize)))
	}
	for k, n := range nodes {
		pace.Tick()
		h := x.hashOf(k)
		i := x.home(h)
		for x.slot(i).hash != 0 {
			i = (i + 1) & x.mask
		}
		*x.slot(i) = indexSlot{h, n}
	}
	return x
}

// indexFor returns the index of the zone b built: for an edit of an
// indexed zone, its index with the names the edit made, copied or removed
// put right in copies of the pages they are on; a new index otherwise, or
// when the edit grew the zone past half its slots.
func (b *Builder) indexFor(z *Zone) *index {
	base := b.base
	if base == nil || base.idx == nil || len(z.nodes) < indexMin || 2*len(z.nodes) > int(base.idx.mask+1) {
		return newIndex(z.nodes, &b.pace)
	}
	e := indexEdit{index: &index{seed: base.idx.seed, pages: slices.Clone(base.idx.pages), mask: base.idx.mask}}
	e.copied = make([]bool, len(e.pages))
	for n := range b.owned {
		b.pace.Tick()
		if z.nodes[n.key] == n {
			e.set(n)
		}
	}
	for _, k := range b.gone {
		if z.nodes[k] == nil {
			e.remove(k)
		}
	}
	return e.index
}

// indexEdit is an index being put right for an edit: its pages are its
// base's until written.
type indexEdit struct {
	*index
	copied []bool // the pages that are this index's own
}

// writable is the slot at i, on a page of the edit's own.
func (e *indexEdit) writable(i uint64) *indexSlot {
	p := i >> pageBits
	if !e.copied[p] {
		e.pages[p] = slices.Clone(e.pages[p])
		e.copied[p] = true
	}
	return &e.pages[p][i&(pageSize-1)]
}

// set puts n in the index, in place of the node of the same name where
// there is one.
func (e *indexEdit) set(n *node) {
	h := e.hashOf(n.key)
	i, _ := e.probe(n.key, h)
	*e.writable(i) = indexSlot{h, n}
}

// remove takes the name with key k out of the index, if it is there, and
// moves back each slot after it that its search would no longer reach
// across the hole (linear probing's deletion, which leaves no tombstones).
func (e *indexEdit) remove(k string) {
	i, found := e.probe(k, e.hashOf(k))
	if !found {
		return
	}
	for j := (i + 1) & e.mask; e.slot(j).hash != 0; j = (j + 1) & e.mask {
		// The slot at j may fill the hole at i unless its search begins
		// after i, cyclically, and no later than j.
		home := e.home(e.slot(j).hash)
		if (j-home)&e.mask >= (j-i)&e.mask {
			*e.writable(i) = *e.slot(j)
			i = j
		}
	}
	*e.writable(i) = indexSlot{}
}

// hashOf is k's hash in x, never 0.
func (x *index) hashOf(k string) uint64 { return maphash.String(x.seed, k) | 1 }

// home is the slot where the search for hash h begins: from the hash's
// bits above the lowest, which hashOf sets in every hash (from the bits
// with it, every search began at an odd slot, and the table, half full,
// was searched as if it were full, its even slots taken only by names
// whose odd one was).
func (x *index) home(h uint64) uint64 { return h >> 1 & x.mask }

// probe returns the slot of the key k, whose hash is h, and true; or the
// empty slot where its search ends, and false.
func (x *index) probe(k string, h uint64) (uint64, bool) {
	for i := x.home(h); ; i = (i + 1) & x.mask {
		s := x.slot(i)
		if s.hash == h && s.n.key == k {
			return i, true
		}
		if s.hash == 0 {
			return i, false
		}
	}
}

// get returns the node with key k, or nil.
func (x *index) get(k string) *node {
	if i, found := x.probe(k, x.hashOf(k)); found {
		return x.slot(i).n
	}
	return nil
}

// slotLine is the address of the slot where a search for hash h begins.
func (x *index) slotLine(h uint64) uintptr {
	return uintptr(unsafe.Pointer(x.slot(x.home(h))))
}

// likely returns the first node whose hash is h: the node of the name
// hashed, unless another name shares its hash (a warming may misjudge; a
// lookup does not, comparing keys). nil when no name has hash h.
func (x *index) likely(h uint64) *node {
	for i := x.home(h); ; i = (i + 1) & x.mask {
		s := x.slot(i)
		if s.hash == h {
			return s.n
		}
		if s.hash == 0 {
			return nil
		}
	}
}

// node returns the node with key k, or nil: through the index where the
// zone has one.
func (z *Zone) node(k string) *node {
	if z.idx != nil {
		return z.idx.get(k)
	}
	if z.nodes != nil { // while Build runs
		return z.nodes[k]
	}
	return fewNode(z.few, k)
}
