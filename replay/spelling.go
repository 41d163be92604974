package replay

import (
	"bytes"
	"encoding/binary"

	"github.com/ontimedns/ontime/internal/swar"
)

// A resolver that uses the 0x20 encoding (the case of each letter of the
// name drawn at random) asks every question in a spelling of its own, and
// checks that the answer's question is spelled as it asked. An answer
// whose octets hold the question's case only in its question section is
// the answer to every spelling, once that section is written as asked:
// every other name equal to the question, or ending in one of its
// suffixes, points at it (the packer compresses without regard to case,
// so the same names point at the same octets in every spelling). Such an
// answer is kept once, flagged (Answer.AnyCase), and found for any
// spelling (Find). Before, each spelling was a miss: with the 0x20
// encoding the full chain answered 0.85x Knot's queries a second, and
// 1.05x since (bench/README.md, 2026-12-06).

// spelledAs reports whether wire's question section is one question whose
// name is key's (a Key's) octet for octet, with no escapes: a name respell
// can write over in another case.
func spelledAs(wire, key []byte) bool {
	name := key[:len(key)-keyFields]
	if len(wire) < 12 || wire[4] != 0 || wire[5] != 1 || bytes.IndexByte(name, '\\') >= 0 {
		return false
	}
	return wireIs(wire[12:], name)
}

// wireIs reports whether w starts with the wire form of name, a
// presentation name with no escapes, octet for octet.
func wireIs(w, name []byte) bool {
	if len(name) == 1 && name[0] == '.' {
		name = name[:0] // the root: no label
	}
	i := 0 // the length octet of the next label in w
	for len(name) > 0 {
		dot := bytes.IndexByte(name, '.')
		if dot <= 0 || i+1+dot > len(w) || int(w[i]) != dot || !bytes.Equal(w[i+1:i+1+dot], name[:dot]) {
			return false
		}
		i += 1 + dot
		name = name[dot+1:]
	}
	return i < len(w) && w[i] == 0
}

// sameButCase reports whether keys a and b differ at most in the case of
// their names' letters. The fields after the names are equal octet for
// octet, and so are the names' lengths. The names are compared eight
// octets at a time, lowercased (a byte at a time it was a third of a
// Find under the 0x20 encoding).
func sameButCase(a, b []byte) bool {
	if len(a) != len(b) || len(a) < keyFields {
		return false
	}
	n := len(a) - keyFields // the names' length
	word := func(s []byte, i int) uint64 { return swar.Lower(binary.LittleEndian.Uint64(s[i:])) }
	switch {
	case n >= 8:
		for i := 0; i+8 <= n; i += 8 {
			if word(a, i) != word(b, i) {
				return false
			}
		}
		if word(a, n-8) != word(b, n-8) { // the last word, overlapping the one before
			return false
		}
	default:
		for i := range n {
			if swar.Lower(uint64(a[i])) != swar.Lower(uint64(b[i])) {
				return false
			}
		}
	}
	return bytes.Equal(a[n:], b[n:])
}

// respell writes the letters of name, the same name as the question of
// the answer wire in another case, over the question's: the same name
// with no escapes, so each octet of name but its dots stands where its
// label puts it.
func respell(wire []byte, name string) {
	at := 13 // the first label's first letter
	for i := 0; i < len(name); i++ {
		if name[i] != '.' {
			wire[at] = name[i]
		}
		at++ // a dot stands where the next label's length is
	}
}
