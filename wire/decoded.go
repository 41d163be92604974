package wire

import (
	"encoding/base64"
	"unsafe"
)

// decoded remembers the wire form of the base64 strings an encoder has
// decoded lately: RRSIG signatures and DNSKEY keys, which miekg/dns keeps
// as text and every Pack decodes again (a quarter of a signed answer's
// time). A server answers from records it holds for as long as their zone
// is served, so the same signature strings come back message after
// message, and one found here is copied, not decoded.
//
// A slot is chosen by the string's address and length, and counts only if
// it holds the same text: equal strings decode to equal bytes whatever
// their addresses, and comparing the same string with itself is one
// pointer comparison. The slot keeps the string it decoded, so an address
// cannot be freed and reused while it is remembered.
type decoded struct {
	slots [decodedSlots]decodedSlot
	off   bool // nothing remembered: a benchmark's first-time figure
}

type decodedSlot struct {
	text string
	wire []byte
}

// decodedSlots is how many strings an encoder remembers: the signatures
// of a few hundred recently answered RRsets, about 100 KB with 2048-bit
// RSA.
const decodedSlots = 256

// minDecoded is the shortest text worth remembering: below it, decoding
// costs about what looking it up does.
const minDecoded = 32

// appendBase64 appends the decoded form of s, base64 as miekg/dns reads
// it, to b: remembered, or decoded and remembered. A string that does not
// decode is not remembered, and fails with encoding/base64's error.
func (d *decoded) appendBase64(b []byte, s string) ([]byte, error) {
	if len(s) < minDecoded || d.off {
		return base64.StdEncoding.AppendDecode(b, bytesOf(s))
	}
	slot := &d.slots[stringSlot(s, decodedSlots)]
	if slot.text == s {
		return append(b, slot.wire...), nil
	}
	start := len(b)
	b, err := base64.StdEncoding.AppendDecode(b, bytesOf(s))
	if err != nil {
		return b, err
	}
	slot.text = s
	slot.wire = append(slot.wire[:0], b[start:]...)
	return b, nil
}

// stringSlot chooses one of n slots for the string s by its address and
// length: the same signature string comes back from the record that holds
// it.
func stringSlot(s string, n uintptr) uintptr {
	p := uintptr(unsafe.Pointer(unsafe.StringData(s)))
	return (p>>4 ^ p>>12 ^ uintptr(len(s))) % n
}
