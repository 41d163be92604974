package wire

import (
	"slices"

	"github.com/miekg/dns"
)

// nsec3s remembers the RDATA of the NSEC3 records an encoder has packed
// lately. NSEC3's RDATA holds no name, so it packs to the same octets
// wherever it stands in a message; but miekg/dns keeps its next hashed
// owner as base32 text, its salt as hex and its types as a list, and each
// pack decoded and built them again: on a flood of names an NSEC3 zone
// lacks, with three NSEC3 records an answer, 2% of the server's samples;
// remembered, the flood answered 1.011x as many queries a CPU-second
// (bench/README.md, 2026-12-06).
//
// A slot is chosen by the next hashed owner's address and length, and
// counts only where every field of the record is what the slot packed:
// its next owner the same string (address and length, as decoded.go
// compares: the slot's text is not read, which another record's would be
// cold), then its salt the same text and its types equal to the slot's
// copy of them. A record changed in place after it was packed is packed
// again, not found. The slot keeps the strings, so their addresses cannot
// be freed and reused while remembered.
type nsec3s struct {
	slots [nsec3Slots]nsec3Slot
	off   bool // nothing remembered: a benchmark's first-time figure
}

type nsec3Slot struct {
	next, salt                    string
	hash, flags, saltLen, hashLen uint8
	iterations                    uint16
	types                         []uint16
	wire                          []byte // the RDATA
	bitmapLen                     int    // the octets of its type bitmap (Encoder.bitmapLen)
}

// nsec3Slots is how many NSEC3 records an encoder remembers: a denial
// holds up to three, and a flood of new names picks one of them at
// random, so only the zone's few constant ones (the closest encloser's,
// the wildcard's cover) come back often.
const nsec3Slots = 64

// find returns the slot that packed rr as it is now, or nil.
func (n *nsec3s) find(rr *dns.NSEC3) *nsec3Slot {
	if n.off {
		return nil
	}
	s := &n.slots[stringSlot(rr.NextDomain, nsec3Slots)]
	if s.wire == nil || !sameString(s.next, rr.NextDomain) || s.salt != rr.Salt ||
		s.hash != rr.Hash || s.flags != rr.Flags || s.saltLen != rr.SaltLength ||
		s.hashLen != rr.HashLength || s.iterations != rr.Iterations || !slices.Equal(s.types, rr.TypeBitMap) {
		return nil
	}
	return s
}

// keep remembers wire, rr's RDATA as just packed, whose type bitmap is
// bitmapLen octets of it.
func (n *nsec3s) keep(rr *dns.NSEC3, wire []byte, bitmapLen int) {
	if n.off {
		return
	}
	s := &n.slots[stringSlot(rr.NextDomain, nsec3Slots)]
	s.next, s.salt = rr.NextDomain, rr.Salt
	s.hash, s.flags, s.saltLen, s.hashLen, s.iterations = rr.Hash, rr.Flags, rr.SaltLength, rr.HashLength, rr.Iterations
	s.types = append(s.types[:0], rr.TypeBitMap...)
	s.wire = append(s.wire[:0], wire...)
	s.bitmapLen = bitmapLen
}
