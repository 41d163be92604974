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
// it holds the same string: the same address and length, which is the
// same text, since a string is never written and the slot keeps the
// string it decoded, so its address cannot be freed and reused while it
// is remembered. The same text at another address (a record parsed
// twice) is decoded again. Comparing the texts, as this did until
// 2026-12-06, read the slot's text wherever its address differed: under
// a flood of names an NSEC3 zone lacks, each denial signs a record picked
// at random, whose slot held another's signature, cold: that read was
// 1.7% of the server's samples, and the flood answered 1.006x as many
// queries a CPU-second without it (bench/README.md).
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
	if sameString(slot.text, s) {
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

// sameString says whether a and b are the same string: the same address
// and length. Neither is read.
func sameString(a, b string) bool {
	return unsafe.StringData(a) == unsafe.StringData(b) && len(a) == len(b)
}
