package wire

import "unsafe"

// scanned remembers what scanPlain found in the names an encoder wrote
// lately: each name's wire form in its own case, lowercased, and where its
// labels start. A server answers from records it holds for as long as it
// serves their zone, so the same owner and target strings (the apex, its
// name servers, their glue) come back message after message; one found
// here is copied rather than scanned again for its dots and its case.
//
// As in decoded.go, a slot is chosen by the string's address and length
// and counts only if it holds the same text; the slot keeps its string, so
// an address cannot be freed and reused while it is remembered.
type scanned struct {
	slots [scannedSlots]scannedSlot
	off   bool // nothing remembered: a benchmark's first-time figure
}

type scannedSlot struct {
	name string
	nl   int
	gen  uint32 // the message that last used the slot: while it runs, the slot is kept
	b    []byte // wire form (len(name)+1 octets), lowercased form, label starts
}

// parts returns the slot's wire form, lowercased form and label starts.
func (sl *scannedSlot) parts() (wire, lower []byte, labels []uint8) {
	n := len(sl.name) + 1
	return sl.b[:n], sl.b[n : 2*n], sl.b[2*n:]
}

// scannedSlots is how many names an encoder remembers: those of a few
// hundred recent answers, about 40 KB with names of 30 octets.
const scannedSlots = 512

// find returns the slot that remembers the plain name s, or nil. The slot
// is kept, unchanged, for the rest of message gen, so the message's tables
// may hold its parts instead of copies.
func (c *scanned) find(s string, gen uint32) *scannedSlot {
	if c.off {
		return nil
	}
	sl := &c.slots[stringSlot(s, scannedSlots)]
	if sl.name != s {
		return nil
	}
	sl.gen = gen
	return sl
}

// remember keeps the scan of the plain name s, written in message gen:
// wire and lower are its wire form as written and lowercased, labels its
// label starts. It returns the slot, kept as find keeps it, or nil where
// the slot is kept for another name of the same message.
func (c *scanned) remember(s string, gen uint32, wire, lower []byte, labels []uint8) *scannedSlot {
	sl := &c.slots[stringSlot(s, scannedSlots)]
	if c.off || sl.gen == gen {
		return nil
	}
	sl.name, sl.nl, sl.gen = s, len(labels), gen
	sl.b = append(append(append(sl.b[:0], wire...), lower...), labels...)
	return sl
}

// stringSlot chooses one of n slots for the string s by its address and
// length (scanned and decoded both remember strings this way).
func stringSlot(s string, n uintptr) uintptr {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return (p>>4 ^ p>>12 ^ uintptr(len(s))) % n
}
