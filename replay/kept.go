package replay

import (
	"encoding/binary"
	"unsafe"
)

// kept is one answer as a slot keeps it, in one allocation: a header, the
// request's key, then the answer's octets. One allocation, not an entry
// pointing at a key and an answer: a kept answer costs its octets and
// the allocator's rounding, and a hit reads one run of lines.
//
// The header: the zone version (8 octets), the message's Msg.Len (4), its
// rcode (2), the key's length (2), the answer's (2), the allocation's
// length (2), the rate limiter's subject (8), little-endian. An rcode
// takes 12 bits: the rcode's field's top bit says the answer answers its
// question in any case (Answer.AnyCase). It is not written once a slot
// points at it: other Caches may be reading it.
type kept []byte

const headLen = 8 + 4 + 2 + 2 + 2 + 2 + 8

// anyCase is the rcode field's flag for an answer to any case.
const anyCase = 1 << 15

// keptAt is the kept answer whose first octet p is.
func keptAt(p *byte) kept {
	head := unsafe.Slice(p, headLen)
	return unsafe.Slice(p, int(binary.LittleEndian.Uint16(head[18:])))
}

func (k kept) version() uint64 { return binary.LittleEndian.Uint64(k) }
func (k kept) msgLen() int     { return int(binary.LittleEndian.Uint32(k[8:])) }
func (k kept) rcode() int      { return int(binary.LittleEndian.Uint16(k[12:]) &^ anyCase) }
func (k kept) anyCase() bool   { return k[13]&(anyCase>>8) != 0 }
func (k kept) keyLen() int     { return int(binary.LittleEndian.Uint16(k[14:])) }
func (k kept) wireLen() int    { return int(binary.LittleEndian.Uint16(k[16:])) }
func (k kept) subject() uint64 { return binary.LittleEndian.Uint64(k[20:]) }
func (k kept) key() []byte     { return k[headLen : headLen+k.keyLen()] }

// wire is the answer's octets, with no room past them (a caller that
// appends copies).
func (k kept) wire() []byte {
	at := headLen + k.keyLen()
	return k[at : at+k.wireLen() : at+k.wireLen()]
}

// newKept returns an answer as a slot keeps it, in an allocation of its
// own. Keys are at most MaxKey octets and answers MaxWire: every length
// fits its field.
func newKept(version uint64, key []byte, a Answer) kept {
	k := make(kept, headLen+len(key)+len(a.Wire))
	binary.LittleEndian.PutUint64(k, version)
	binary.LittleEndian.PutUint32(k[8:], uint32(a.Len))
	rcode := uint16(a.Rcode)
	if a.AnyCase && spelledAs(a.Wire, key) {
		rcode |= anyCase
	}
	binary.LittleEndian.PutUint16(k[12:], rcode)
	binary.LittleEndian.PutUint16(k[14:], uint16(len(key)))
	binary.LittleEndian.PutUint16(k[16:], uint16(len(a.Wire)))
	binary.LittleEndian.PutUint16(k[18:], uint16(len(k)))
	binary.LittleEndian.PutUint64(k[20:], a.Subject)
	copy(k[headLen+copy(k[headLen:], key):], a.Wire)
	return k
}
