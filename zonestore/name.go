package zonestore

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/swar"
)

// Names are keyed by their lowercased, uncompressed wire form. A key's suffixes
// that start at a label boundary are the keys of its ancestors, so walking up a
// name is slicing a string, and a lookup is one hash and one memcmp: no label
// splitting, no case folding at compare time (the seed's "cheap keys").

// maxName is the longest wire name (RFC 1035 section 2.3.4).
const maxName = 255

// appendKey appends the lowercased wire form of the presentation name to dst,
// treating a name without its final dot as fully qualified. It handles the
// escapes of RFC 1035 section 5.1 (\X and \DDD) itself: this runs for every
// query, and dns.PackDomainName costs several times more (BenchmarkKey).
func appendKey(dst []byte, name string) ([]byte, error) {
	if name == "." || name == "" {
		return append(dst, 0), nil
	}
	if strings.IndexByte(name, '\\') < 0 {
		if k, ok := appendPlainKey(dst, name); ok {
			return k, nil
		}
	}
	return appendEscapedKey(dst, name)
}

// appendPlainKey is appendKey for a name without escapes, the common case:
// its wire form is its text shifted by one octet, each dot replaced by the
// length of the label after it, so the text is copied and lowercased eight
// octets at a time and each label's length patched in where its dots are
// found, eight at a time too. ok is false for a name it cannot key (an
// empty or long label, a long name): appendEscapedKey then says why.
func appendPlainKey(dst []byte, name string) (k []byte, ok bool) {
	start, n := len(dst), len(name)
	if n > maxName {
		return dst, false
	}
	// Room for the length octet, the text, the root and the last word's
	// spill past the text.
	dst = slices.Grow(dst, n+9)[:start+n+9]
	w := dst[start:]
	label := 0 // where the current label's text starts in name
	for i := 0; i < n; i += 8 {
		x := swar.Word(name, i)
		binary.LittleEndian.PutUint64(w[1+i:], swar.Lower(x))
		for dots := swar.Dots(x, n-i); dots != 0; dots &= dots - 1 {
			d := i + bits.TrailingZeros64(dots)/8
			l := d - label
			if l == 0 || l > 63 {
				return dst[:start], false
			}
			w[label] = byte(l)
			label = d + 1
		}
	}
	// The key's length: the final dot's place takes the root; without a
	// final dot, the last label gets its length and the root comes after.
	end := n + 1
	if label < n {
		l := n - label
		if l > 63 {
			return dst[:start], false
		}
		w[label] = byte(l)
		end = n + 2
	}
	w[end-1] = 0
	if end > maxName {
		return dst[:start], false
	}
	return dst[:start+end], true
}

// appendEscapedKey is appendKey an octet at a time, escapes and all.
func appendEscapedKey(dst []byte, name string) ([]byte, error) {
	start := len(dst)
	lenAt, l := len(dst), 0
	dst = append(dst, 0)
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch c {
		case '.':
			if l == 0 {
				return dst[:start], fmt.Errorf("name %q: empty label", name)
			}
			dst[lenAt] = byte(l)
			lenAt, l = len(dst), 0
			dst = append(dst, 0)
			continue
		case '\\':
			switch {
			case i+3 < len(name) && isDigit(name[i+1]) && isDigit(name[i+2]) && isDigit(name[i+3]):
				v := int(name[i+1]-'0')*100 + int(name[i+2]-'0')*10 + int(name[i+3]-'0')
				if v > 255 {
					return dst[:start], fmt.Errorf("name %q: bad escape", name)
				}
				c = byte(v)
				i += 3
			case i+1 < len(name):
				c = name[i+1]
				i++
			default:
				return dst[:start], fmt.Errorf("name %q: trailing backslash", name)
			}
		}
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		dst = append(dst, c)
		if l++; l > 63 {
			return dst[:start], fmt.Errorf("name %q: label longer than 63 octets", name)
		}
	}
	if l > 0 { // no final dot
		dst[lenAt] = byte(l)
		dst = append(dst, 0)
	}
	if len(dst)-start > maxName {
		return dst[:start], fmt.Errorf("name %q: longer than 255 octets", name)
	}
	return dst, nil
}

// key returns the lookup key of a presentation name. It is kept out of line
// so that its buffer is on the stack only while it runs: inlined, it made the
// frames of the answer path larger and fresh goroutine stacks grow more often.
//
//go:noinline
func key(name string) (string, error) {
	var buf [maxName + 1]byte
	b, err := appendKey(buf[:0], name)
	return string(b), err
}

// keyOf is key, but returns the zone's own string for a name it holds: a
// CNAME's target in the zone is followed without a key of its own being
// allocated. The key is made once, on the stack. Out of line for the
// reason key is.
//
//go:noinline
func (z *Zone) keyOf(name string) (string, error) {
	var buf [maxName + 1]byte
	b, err := appendKey(buf[:0], name)
	if err != nil {
		return "", err
	}
	if n := z.named(keyOfBytes(b)); n != nil {
		return n.key, nil
	}
	return string(b), nil
}

// nodeOf returns the node of the presentation name name, or nil when the
// zone has none (a name outside it, or not a valid name). The key is built
// on the stack and only indexes the map, which copies nothing: no
// allocation. Out of line for the reason key is.
//
//go:noinline
func (z *Zone) nodeOf(name string) *node {
	var buf [maxName + 1]byte
	b, err := appendKey(buf[:0], name)
	if err != nil {
		return nil
	}
	return z.named(keyOfBytes(b))
}

// parentKey returns the key of the name one label up; the root's parent is "".
func parentKey(k string) string {
	if len(k) <= 1 {
		return ""
	}
	return k[1+int(k[0]):]
}

// labelCount counts the labels of a wire key, the root not counted.
func labelCount(k string) int {
	n := 0
	for i := 0; i < len(k) && k[i] != 0; i += 1 + int(k[i]) {
		n++
	}
	return n
}

// appendSortKey appends a key whose byte order is the canonical DNS name order
// of RFC 4034 section 6.1: labels from the root down, each compared as lowercase
// octets, a shorter label first. Each label is written with 0x00 escaped as
// 0x00 0xFF and ended by 0x00 0x01, so a label sorts before its extensions and
// a name before its descendants. NSEC lookups binary-search these with one
// bytes comparison per step instead of splitting labels.
func appendSortKey(dst []byte, wireKey string) []byte {
	var offs [128]int
	n := 0
	for i := 0; i < len(wireKey) && wireKey[i] != 0; i += 1 + int(wireKey[i]) {
		offs[n] = i
		n++
	}
	for j := n - 1; j >= 0; j-- {
		o := offs[j]
		label := wireKey[o+1 : o+1+int(wireKey[o])]
		if strings.IndexByte(label, 0) < 0 { // nearly every label: copied whole
			dst = append(append(dst, label...), 0, 1)
			continue
		}
		for _, c := range []byte(label) {
			if c == 0 {
				dst = append(dst, 0, 0xFF)
			} else {
				dst = append(dst, c)
			}
		}
		dst = append(dst, 0, 1)
	}
	return dst
}

// isWildcardKey reports whether the key's first label is "*".
func isWildcardKey(k string) bool { return len(k) >= 2 && k[0] == 1 && k[1] == '*' }

// subdomainKey reports whether child is parent or below it. Both are wire keys,
// so a suffix that starts at a label boundary of child is the whole test.
func subdomainKey(child, parent string) bool {
	for k := child; k != ""; k = parentKey(k) {
		if len(k) == len(parent) {
			return k == parent
		}
		if len(k) < len(parent) {
			return false
		}
	}
	return false
}

// presentation returns a wire key as a lowercase presentation name.
func presentation(k string) string {
	name, _, err := dns.UnpackDomainName([]byte(k), 0)
	if err != nil {
		return strings.ToLower(fmt.Sprintf("%x", k))
	}
	return name
}

// equalName reports whether two presentation names are one name: the
// same octets but for the case of A to Z, the only letters with a case in
// DNS names (RFC 4343). strings.EqualFold folds Unicode, and every octet
// that is no UTF-8 to one rune: it took "café" for "cafÉ", a Kelvin sign
// for "k" and 0x89 for 0x8A, in names a zone file writes in raw octets.
// Escapes are compared as written: "\065" is not "a" here, which at worst
// calls one name two.
func equalName(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		if lowerASCII(a[i]) != lowerASCII(b[i]) {
			return false
		}
	}
	return true
}

// lowerASCII is c in lowercase if it is one of A to Z.
func lowerASCII(c byte) byte {
	if 'A' <= c && c <= 'Z' {
		return c + 'a' - 'A'
	}
	return c
}
