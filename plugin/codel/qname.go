package codel

import (
	"unsafe"

	"github.com/miekg/dns"
)

// plainOctet marks the octets that miekg/dns writes into a name's
// presentation form as they are: printable ASCII, but for those it puts a
// backslash before (the dot, the space, ' @ ; ( ) " and the backslash).
var plainOctet = func() (t [256]bool) {
	for c := '!'; c <= '~'; c++ {
		t[c] = true
	}
	for _, c := range `.'@;()"\` {
		t[c] = false
	}
	return t
}()

// unpackName is dns.UnpackDomainName for a query's question. A name of
// plain labels written out in full, as nearly every question is, is read
// here in one pass into room on the stack and made a string once (miekg/dns
// looks at each octet through three tests and appends it on its own). Any
// other name, or anything wrong with one, is read by dns.UnpackDomainName,
// so every result and every error is its own (TestUnpackNameIsMiekg). The
// string is made in room (nil: a string of its own).
func unpackName(m []byte, off int, room *nameRoom) (string, int, error) {
	var buf [256]byte
	n, at, budget := 0, off, 255 // budget: as miekg/dns counts a name's wire octets
	for at < len(m) {
		c := int(m[at])
		if c == 0 {
			if n == 0 {
				return ".", at + 1, nil
			}
			return room.string(buf[:n]), at + 1, nil
		}
		if c > 63 || at+1+c > len(m) { // a pointer, reserved bits, or cut short
			break
		}
		if budget -= c + 1; budget <= 0 {
			break
		}
		label := m[at+1 : at+1+c]
		plain := true
		for _, b := range label {
			plain = plain && plainOctet[b]
		}
		if !plain {
			break
		}
		n += copy(buf[n:], label)
		buf[n] = '.'
		n++
		at += 1 + c
	}
	return dns.UnpackDomainName(m, off)
}

// A nameRoom makes the names of the questions one worker reads, without an
// allocation for each: a name is cut from a block that is only ever
// appended to, so a string once cut never changes, and a block serves some
// dozens of names. The garbage collector frees a block once no name in it
// is held. A name kept after its query (by a cache, say) keeps its block:
// nameBlock octets at most for it.
type nameRoom struct{ block []byte }

const nameBlock = 1024 // a name's presentation form without escapes is under 256 octets

// string returns b as a string; b is not empty.
func (r *nameRoom) string(b []byte) string {
	if r == nil {
		return string(b)
	}
	if len(b) > cap(r.block)-len(r.block) {
		r.block = make([]byte, 0, max(nameBlock, len(b)))
	}
	at := len(r.block)
	r.block = append(r.block, b...)
	return unsafe.String(&r.block[at], len(b))
}
