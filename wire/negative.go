package wire

import (
	"encoding/binary"
	"strings"
	"unsafe"

	"github.com/miekg/dns"
)

// A negative answer (NXDOMAIN or NODATA) of a zone asked without DNSSEC
// is its question and the zone's SOA: the same record whatever name was
// asked (zonestore hands the same *dns.SOA for every one of a zone's
// version). Under a flood of names that do not exist, each asked once,
// packing it was the encoder's whole work, about 200 ns a message: the new
// question scanned and remembered, the SOA's three names compared with it.
//
// Once such an answer is packed, its authority section is kept as a
// template: its octets and the places of its compression pointers. For
// another question that ends in the SOA's owner, every pointer of the
// section moves by the difference in the questions' lengths and nothing
// else changes, as long as the new question shares with each of the SOA's
// names no more than the old one did: the owner's labels, which both hold
// at the same distance from their ends. A name of the SOA below the owner
// (ns1.example.org. in example.org.) whose label above the owner is the
// question's too (a question ns1.example.org., or x.ns1.example.org.)
// would point further into the question; such a question is packed the
// long way. So is one with escapes, and a message that would not fit.
// Both ways give the same octets (TestNegativeTemplateIsTheLongWay).
type negative struct {
	soa *dns.SOA // held, so that its address is not reused under the slot
	// owner is the SOA owner's lowercased wire form; below holds, for each
	// of the SOA's names that ends in it and is longer, the lowercased
	// wire form of its label just above it (its length, then its octets),
	// one after the other.
	owner []byte
	below []byte
	// section is the authority section packed after a question of qlen
	// octets; ptrs are the offsets in it of its compression pointers.
	section []byte
	qlen    int
	ptrs    []uint16
	soaLen  int // what Msg.Len counts of the SOA
}

// negativeSlots is how many zones' templates an encoder keeps, chosen by
// the SOA record's address.
const negativeSlots = 8

// negativeSOA returns the SOA of m where m is a negative answer a template
// may pack: one question, no answer, the SOA alone in the authority
// section, and nothing in the additional section but the OPT record.
func negativeSOA(m *dns.Msg, opt *dns.OPT) *dns.SOA {
	if len(m.Question) != 1 || len(m.Answer) != 0 || len(m.Ns) != 1 {
		return nil
	}
	if len(m.Extra) > 1 || len(m.Extra) == 1 && m.Extra[0] != dns.RR(opt) {
		return nil
	}
	soa, _ := m.Ns[0].(*dns.SOA)
	return soa
}

func negativeSlot(soa *dns.SOA) int {
	p := uintptr(unsafe.Pointer(soa))
	return int(p>>4^p>>10) & (negativeSlots - 1)
}

// fromTemplate writes question q and the authority section of soa's
// template after the header's place, and says whether it did; where not,
// e.buf is as it was. budget is what the message may take before the OPT.
func (e *Encoder) fromTemplate(soa *dns.SOA, q dns.Question, budget int) bool {
	n := &e.negs[negativeSlot(soa)]
	if n.soa != soa || strings.IndexByte(q.Name, '\\') >= 0 {
		return false
	}
	start := len(e.buf)
	b, nl, err := e.names.scanPlain(e.buf, q.Name)
	if err != nil {
		return false
	}
	qlen := len(b) - start
	if !n.holds(e.names.lower[:qlen], e.names.labels[:nl]) || len(b)+4+len(n.section) > budget {
		e.buf = b[:start]
		return false
	}
	b = append(b, byte(q.Qtype>>8), byte(q.Qtype), byte(q.Qclass>>8), byte(q.Qclass))
	at := len(b)
	b = append(b, n.section...)
	shift := qlen - n.qlen
	for _, p := range n.ptrs {
		ptr := int(binary.BigEndian.Uint16(b[at+int(p):])&0x3FFF) + shift
		binary.BigEndian.PutUint16(b[at+int(p):], uint16(ptr)|0xC000)
	}
	e.buf = b
	e.negHits++
	return true
}

// holds says whether the question whose lowercased wire form is key, with
// labels starting at labels, ends in the template's owner and shares with
// the SOA's names no more than that.
func (n *negative) holds(key []byte, labels []uint8) bool {
	at := len(key) - len(n.owner)
	if at < 0 || string(key[at:]) != string(n.owner) {
		return false
	}
	if at == 0 {
		return true
	}
	// The question's label above the owner: at must start a label.
	j := len(labels) - 1
	for j >= 0 && int(labels[j]) > at {
		j--
	}
	if j < 1 || int(labels[j]) != at {
		return false
	}
	above := key[labels[j-1]:at]
	for b := n.below; len(b) > 0; b = b[1+b[0]:] {
		if string(b[:1+b[0]]) == string(above) {
			return false
		}
	}
	return true
}

// keepTemplate keeps, as soa's template, the authority section of the
// message just packed into e.buf (header, question, and soa alone after
// it, no OPT record yet), where the question ends in soa's owner and
// shares with its names no more than that, as fromTemplate asks of the
// next. It runs where the slot holds another zone's template, or none: a
// question of soa's own that the template does not hold leaves it as it
// is.
func (e *Encoder) keepTemplate(soa *dns.SOA) {
	n := &e.negs[negativeSlot(soa)]
	if n.soa == soa {
		return
	}
	b := e.buf
	qend, ok := nameEnd(b, headerLen)
	if !ok || qend+4 > len(b) {
		return
	}
	// The question lowercased, and its label starts, in the names'
	// scratch (the message is packed; it is free), as index finds them.
	t := &e.names
	nl := t.index(b[headerLen:qend])
	key := t.lower[:qend-headerLen]
	// In the encoder's scratch: the owner's lowercased wire form, then,
	// for each of the SOA's names below it, its label above it.
	sc, err := appendName(e.scratch[:0], soa.Hdr.Name)
	if err != nil {
		return
	}
	ownerLen := len(sc)
	lowerWire(sc)
	for _, name := range [2]string{soa.Ns, soa.Mbox} {
		w0 := len(sc)
		if sc, err = appendName(sc, name); err != nil {
			e.scratch = sc[:0]
			return
		}
		w := lowerWire(sc[w0:])
		sc = sc[:w0]
		cut := len(w) - ownerLen
		if cut <= 0 || string(w[cut:]) != string(sc[:ownerLen]) {
			continue
		}
		for j := 0; j < cut; j += int(w[j]) + 1 {
			if j+int(w[j])+1 == cut { // the label above the owner
				sc = append(sc, w[j:cut]...) // copy's overlap is allowed: w lies at or after it
				break
			}
		}
	}
	e.scratch = sc
	cand := negative{owner: sc[:ownerLen], below: sc[ownerLen:]}
	if !cand.holds(key, t.labels[:nl]) {
		return
	}
	// The section's pointers, each into the question's copy of the owner
	// (from lo) or into the section: the long way found no more, as holds
	// says it would not.
	lo := qend - ownerLen
	at := qend + 4
	var ptrs [3]uint16
	np := 0
	i := at
	for k := 0; k < 3; k++ { // the owner, MNAME, RNAME
		end, p, ok := namePointer(b, i)
		if !ok || p >= 0 && int(binary.BigEndian.Uint16(b[p:])&0x3FFF) < lo {
			return
		}
		if p >= 0 {
			ptrs[np] = uint16(p - at)
			np++
		}
		i = end
		if k == 0 {
			i += 10 // type, class, TTL, RDLENGTH
		}
	}
	if i+20 != len(b) { // SERIAL to MINIMUM end the message
		return
	}
	n.soa = soa
	n.owner = append(n.owner[:0], cand.owner...)
	n.below = append(n.below[:0], cand.below...)
	n.section = append(n.section[:0], b[at:]...)
	n.qlen = qend - headerLen
	n.ptrs = append(n.ptrs[:0], ptrs[:np]...)
	n.soaLen = dns.Len(soa)
}

// nameEnd returns where the uncompressed name at b[i:] ends.
func nameEnd(b []byte, i int) (int, bool) {
	end, p, ok := namePointer(b, i)
	return end, ok && p < 0
}

// namePointer returns where the name at b[i:] ends, and the offset of the
// pointer that ends it, or -1.
func namePointer(b []byte, i int) (end, ptr int, ok bool) {
	for i < len(b) {
		switch c := b[i]; {
		case c == 0:
			return i + 1, -1, true
		case c&0xC0 == 0xC0:
			if i+2 > len(b) {
				return 0, 0, false
			}
			return i + 2, i, true
		case c&0xC0 != 0:
			return 0, 0, false
		default:
			i += int(c) + 1
		}
	}
	return 0, 0, false
}

// lowerWire lowercases the ASCII letters of w in place.
func lowerWire(w []byte) []byte {
	for i, c := range w {
		if 'A' <= c && c <= 'Z' {
			w[i] = c + 'a' - 'A'
		}
	}
	return w
}
