package zonestore

import (
	"hash/maphash"
	"unsafe"
)

// A zone of many names finds a name's node through an index of its own
// beside the map of its nodes: an open-addressing table of each name's
// 64-bit hash and node, 16 octets a slot. Found through the map, a name
// costs about as much (bench/README.md, the log), but where the map's
// slot for a name is the runtime's secret, the index's is computed from
// the name alone: a server that knows which queries come next has the CPU
// fetch their slots, then their nodes, while it serves the ones before
// them (Store.Warm, warm.go).
//
// A zone of fewer names is found through the map alone: its few nodes are
// not what a query waits on, and a million such zones would each carry a
// table.

// indexMin is the fewest names for which a zone has an index.
const indexMin = 32

// index maps each key of a zone to its node. Built once with the zone and
// only read after.
type index struct {
	seed  maphash.Seed
	slots []indexSlot // a power of two of them, at most half full
	mask  uint64
}

type indexSlot struct {
	hash uint64 // 0: empty (hashOf never returns 0)
	n    *node
}

// newIndex returns the index of nodes, or nil for too few of them.
func newIndex(nodes map[string]*node) *index {
	if len(nodes) < indexMin {
		return nil
	}
	size := 8
	for size < 2*len(nodes) {
		size *= 2
	}
	x := &index{seed: maphash.MakeSeed(), slots: make([]indexSlot, size), mask: uint64(size - 1)}
	for k, n := range nodes {
		h := x.hashOf(k)
		i := h & x.mask
		for x.slots[i].hash != 0 {
			i = (i + 1) & x.mask
		}
		x.slots[i] = indexSlot{h, n}
	}
	return x
}

// hashOf is k's hash in x, never 0.
func (x *index) hashOf(k string) uint64 { return maphash.String(x.seed, k) | 1 }

// get returns the node with key k, or nil.
func (x *index) get(k string) *node {
	h := x.hashOf(k)
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
		if s.hash == h && s.n.key == k {
			return s.n
		}
		if s.hash == 0 {
			return nil
		}
	}
}

// slotLine is the address of the slot where a search for hash h begins.
func (x *index) slotLine(h uint64) uintptr {
	return uintptr(unsafe.Pointer(&x.slots[h&x.mask]))
}

// likely returns the first node whose hash is h: the node of the name
// hashed, unless another name shares its hash (a warming may misjudge; a
// lookup does not, comparing keys). nil when no name has hash h.
func (x *index) likely(h uint64) *node {
	for i := h & x.mask; ; i = (i + 1) & x.mask {
		s := &x.slots[i]
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
	return z.nodes[k]
}
