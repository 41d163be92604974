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
// plain labels written out in full, as nearly every question is, is
// checked here in one pass, then copied into room whole, its label
// lengths made dots where they stand (the wire form, from its first
// label's text on, is the presentation form but for them); miekg/dns
// looks at each octet through three tests and appends it on its own. Any
// other name, or anything wrong with one, is read by dns.UnpackDomainName,
// so every result and every error is its own (TestUnpackNameIsMiekg). The
// string is made in room (nil: a string of its own).
func unpackName(m []byte, off int, room *nameRoom) (string, int, error) {
	at, budget := off, 255 // budget: as miekg/dns counts a name's wire octets
	for at < len(m) {
		c := int(m[at])
		if c == 0 {
			if at == off {
				return ".", at + 1, nil
			}
			name := room.make(at - off)
			copy(name, m[off+1:at+1])
			for i := int(m[off]); i < len(name); {
				l := name[i]
				name[i] = '.'
				i += int(l) + 1
			}
			return unsafe.String(&name[0], len(name)), at + 1, nil
		}
		if c > 63 || at+1+c > len(m) { // a pointer, reserved bits, or cut short
			break
		}
		if budget -= c + 1; budget <= 0 {
			break
		}
		plain := true
		for _, b := range m[at+1 : at+1+c] {
			plain = plain && plainOctet[b]
		}
		if !plain {
			break
		}
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

// make returns n octets of room for a name (n > 0), which the caller
// fills before it makes a string of them and never writes after.
func (r *nameRoom) make(n int) []byte {
	if r == nil {
		return make([]byte, n)
	}
	if n > cap(r.block)-len(r.block) {
		r.block = make([]byte, 0, max(nameBlock, n))
	}
	at := len(r.block)
	r.block = r.block[:at+n]
	return r.block[at : at+n : at+n]
}
