package wire

import (
	"encoding/binary"
	"math/bits"
	"unsafe"
)

// scanned remembers what scanPlain found in the names an encoder wrote
// lately: each name's wire form in its own case, lowercased, and where its
// labels start. A server answers from records it holds for as long as it
// serves their zone, so the same owners and targets (the apex, its name
// servers, their glue, a popular question) come back message after
// message; one found here is copied rather than scanned again for its dots
// and its case.
//
// A slot is chosen by the name's text (its length and its first and last
// eight octets), so the same name found at another address, as the
// question of every query is, finds its slot. A slot used by a message is
// kept until the message ends, and also says where the message wrote the
// name: it is the message's table of whole names for the names it holds
// (names.few and names.wholes keep the others), so a name met again in the
// message is answered without a search.
type scanned struct {
	slots [scannedSlots]scannedSlot
	off   bool // nothing remembered: a benchmark's first-time figure
}

type scannedSlot struct {
	name string
	// key is nameKey(name), compared before name: the slot's name is
	// another record's, and reading its octets, where it is as long as the
	// one looked for, fetched them cold. Under a flood of names an NSEC3
	// zone lacks, each denial's records are owned by random hashed names
	// of one length, which found their slots holding others': that compare
	// was 1.6% of the server's samples, and keeping the key gave the flood
	// 1.024x the answers a CPU-second (bench/README.md, 2026-12-06).
	key uint64
	gen uint32 // the message that last used the slot: while it runs, the slot is kept
	ptr uint16 // where message gen wrote the name, or noPointer
	b   []byte // wire form (len(name)+1 octets), lowercased form, label starts
}

// parts returns the slot's wire form, lowercased form and label starts.
func (sl *scannedSlot) parts() (wire, lower []byte, labels []uint8) {
	n := len(sl.name) + 1
	return sl.b[:n], sl.b[n : 2*n], sl.b[2*n:]
}

// scannedSlots is how many names an encoder remembers: those of a few
// hundred recent answers, about 40 KB with names of 30 octets.
const (
	scannedBits  = 9
	scannedSlots = 1 << scannedBits
)

// whole returns where the current message wrote the name of slot sl, and
// its wire form in its own case; or, where sl is nil, w's.
func (sl *scannedSlot) whole(w *whole) (uint16, []byte) {
	if sl == nil {
		return w.ptr, w.wire
	}
	return sl.ptr, sl.b[:len(sl.name)+1]
}

// find returns the slot that remembers the plain name s, or nil. (With
// off set, nothing is remembered, so nothing is found: find needs no
// test of its own. Since its slot keeps the name's key, find is too
// large for the compiler to inline; the flood measured with the key,
// 1.024x, paid that call.)
func (c *scanned) find(s string) *scannedSlot {
	k := nameKey(s)
	sl := c.slotOf(k)
	if sl.key != k || sl.name != s {
		return nil
	}
	return sl
}

// remember keeps the scan of the plain name s, written in message gen:
// wire and lower are its wire form as written and lowercased, labels its
// label starts. It returns the slot, or nil where the slot is kept for
// another name of the same message. The caller sets the slot's ptr.
func (c *scanned) remember(s string, gen uint32, wire, lower []byte, labels []uint8) *scannedSlot {
	k := nameKey(s)
	sl := c.slotOf(k)
	if c.off || sl.gen == gen {
		return nil
	}
	sl.name, sl.key, sl.gen = s, k, gen
	sl.b = append(append(append(sl.b[:0], wire...), lower...), labels...)
	return sl
}

// forget clears the slots' generations, when the counter that numbers
// messages wraps and an old one's could come back; what the slots
// remember stays.
func (c *scanned) forget() {
	for i := range c.slots {
		c.slots[i].gen = 0
	}
}

// slotOf is the slot of the name whose key is k (nameKey): its top bits.
func (c *scanned) slotOf(k uint64) *scannedSlot { return &c.slots[k>>(64-scannedBits)] }

// nameKey is the name s's key, which chooses its slot (slotOf) and which
// the slot keeps, to tell names apart without reading them: its length
// and its first and last eight octets, mixed into 64 bits; cheaper than
// hashing it all, and names that differ only in their middle are rare
// among a zone's owners and targets. A name shorter than eight octets
// (rare: "org." is a question seldom asked of an authoritative server) is
// keyed by its length and first octet.
func nameKey(s string) uint64 {
	x := uint64(len(s))
	if len(s) >= 8 {
		b := unsafe.Slice(unsafe.StringData(s), len(s))
		x ^= binary.LittleEndian.Uint64(b) ^ bits.RotateLeft64(binary.LittleEndian.Uint64(b[len(b)-8:]), 29)
	} else if len(s) > 0 {
		x ^= uint64(s[0]) << 8
	}
	return x * 0x9E3779B97F4A7C15
}
