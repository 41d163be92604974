package zonestore

import (
	"hash/maphash"
	"iter"
	"maps"
	"unsafe"
)

// A zone of fewer than indexMin names keeps them in one short array of
// each name's hash and node, in place of a map: a map of a few names is
// a header and a group of key slots elsewhere, whose keys a lookup
// compares (fetched from elsewhere again), where the array is one or two
// cache lines a warming can fetch ahead, then the node its hash picks
// (Store.Warm). Among 100,000 zones of five names each, the maps' lookups
// were 14% of a looked-up query's CPU, every one missing the caches; with
// the arrays the same server answered 1.30x the queries a second, in 13
// to 17 fewer octets a record (bench/README.md, 2026-12-06).
type fewSlot struct {
	hash uint64
	n    *node
}

// fewSeed hashes every small zone's names: a hash only picks the node
// whose key is then compared.
var fewSeed = maphash.MakeSeed()

// fewHash is k's hash among a small zone's names.
func fewHash(k string) uint64 { return maphash.String(fewSeed, k) }

// fewOf is the array of nodes' names.
func fewOf(nodes map[string]*node) []fewSlot {
	few := make([]fewSlot, 0, len(nodes))
	for k, n := range nodes {
		few = append(few, fewSlot{fewHash(k), n})
	}
	return few
}

// fewNode returns the node with key k among few, or nil.
func fewNode(few []fewSlot, k string) *node {
	h := fewHash(k)
	for i := range few {
		if few[i].hash == h && few[i].n.key == k {
			return few[i].n
		}
	}
	return nil
}

// named returns the node with key k, or nil, through z's map where it has
// one: for the names a lookup meets on its way (targets, wildcards, cuts,
// the ancestors a proof walks up) and those an edit compares, which no
// warming fetched, the map is quicker than the index (index.go).
func (z *Zone) named(k string) *node {
	if z.nodes != nil {
		return z.nodes[k]
	}
	return fewNode(z.few, k)
}

// likely returns the node whose key has hash h in z's index or array, or
// nil (a warming's guess: the key is not compared, as index.likely).
func (z *Zone) likely(h uint64) *node {
	if z.idx != nil {
		return z.idx.likely(h)
	}
	for i := range z.few {
		if z.few[i].hash == h {
			return z.few[i].n
		}
	}
	return nil
}

// slotLine is the address where a search for hash h among z's names
// begins: its index's slot, or its array.
func (z *Zone) slotLine(h uint64) uintptr {
	if z.idx != nil {
		return z.idx.slotLine(h)
	}
	return uintptr(unsafe.Pointer(unsafe.SliceData(z.few)))
}

// allNodes yields every name of z, its key and node, in no order.
func (z *Zone) allNodes() iter.Seq2[string, *node] {
	if z.nodes != nil {
		return maps.All(z.nodes)
	}
	return func(yield func(string, *node) bool) {
		for _, s := range z.few {
			if !yield(s.n.key, s.n) {
				return
			}
		}
	}
}

// nodeMap is a map of z's names that an edit may change.
func (z *Zone) nodeMap() map[string]*node {
	if z.nodes != nil {
		return maps.Clone(z.nodes)
	}
	m := make(map[string]*node, len(z.few))
	for _, s := range z.few {
		m[s.n.key] = s.n
	}
	return m
}

// keyOfBytes is b as a key to look a node up by, sharing b's octets: for
// a key built on the stack, which a lookup only compares and never keeps,
// so that none is allocated (a map's m[string(b)] does the same).
func keyOfBytes(b []byte) string { return unsafe.String(unsafe.SliceData(b), len(b)) }
