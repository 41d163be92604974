package wire

import (
	"encoding/binary"
	"strings"
	"unsafe"

	"github.com/miekg/dns"
)

// A negative answer (NXDOMAIN or NODATA) is its question and its zone's
// authority records: the SOA, and where the zone is signed with NSEC and
// the query asked for DNSSEC, the SOA's signature and the NSEC records
// that deny the name, each with its signature. zonestore hands the same
// records (the same *dns.SOA, *dns.RRSIG, *dns.NSEC) for every question a
// zone's version denies the same way: unsigned, every name it lacks; with
// NSEC, every name between the same two of its names. Under a flood of
// names that do not exist, each asked once, packing it was the encoder's
// whole work: about 200 ns a message unsigned, the new question scanned
// and remembered, the SOA's three names compared with it; with NSEC, 507
// to 686 (BenchmarkEncodeNegativeNSEC), 13% of the server's samples on the
// load test's NSEC flood (bench/README.md, 2026-12-07).
//
// Once such an answer is packed, its authority section is kept as a
// template: its octets and the places of its compression pointers. For
// another question that ends in the SOA's owner, every pointer of the
// section moves by the difference in the questions' lengths and nothing
// else changes, as long as the new question shares with each of the
// section's names no more than the old one did: the owner's labels, which
// both hold at the same distance from their ends. A name of the section
// below the owner (ns1.example.org. in example.org., an NSEC record's
// owner) whose label above the owner is the question's too (a question
// ns1.example.org., or x.ns1.example.org.) would point further into the
// question; such a question is packed the long way. So is one with
// escapes, and a message that would not fit. Both ways give the same
// octets (TestNegativeTemplateIsTheLongWay, TestSignedNegativeTemplateIs
// TheLongWay).
//
// A section is kept the second time in a row its slot packs it the long
// way, so that a section seen once is not copied for nothing. An NSEC3
// zone's denials are left out: each holds the NSEC3 record that covers the
// name's hash, one of the zone's many, and is seldom packed twice; looking
// for their templates and marking them seen took 4% more time a denial
// for none found (in process: 849-895 against 887-920 ns; wire's README).
type negative struct {
	// recs are the addresses of the section's records (recordAddr), nrec
	// of them, held, so that they are not reused under the slot; in the
	// slot itself, so that telling whether it holds a section reads no
	// other memory.
	recs [maxNegative]unsafe.Pointer
	nrec int
	key  uint64 // negativeSection's key of recs
	seen uint64 // the key of the section this slot packed the long way last, not kept
	// owner is the SOA owner's lowercased wire form; below holds, for each
	// of the section's names that may end in a pointer (appendAboves) and
	// that ends in it and is longer, the lowercased wire form of its label
	// just above it (its length, then its octets), one after the other,
	// each once.
	owner []byte
	below []byte
	// section is the authority section packed after a question of qlen
	// octets; ptrs are the offsets in it of its compression pointers.
	section []byte
	qlen    int
	ptrs    []uint16
	ulen    int // what Msg.Len counts of the section
}

// negativeSlots is how many sections' templates an encoder keeps, chosen
// by the top negativeBits of their key; maxNegative is the most records a
// section kept holds (the SOA and two NSEC records, each with its
// signature, and room to spare).
const (
	negativeBits  = 4
	negativeSlots = 1 << negativeBits
	maxNegative   = 8
)

// negativeSection returns m's authority section, and its key, where m is a
// negative answer a template may pack: one question, no answer, its zone's
// SOA first in the authority section and nothing there but the SOA, RRSIG
// and NSEC records (their RDATA holds no pointer but the SOA's), at most
// maxNegative of them, and nothing in the additional section but the
// OPT record. The key mixes the records' addresses.
func negativeSection(m *dns.Msg, opt *dns.OPT) ([]dns.RR, uint64) {
	if len(m.Question) != 1 || len(m.Answer) != 0 || len(m.Ns) == 0 || len(m.Ns) > maxNegative {
		return nil, 0
	}
	if len(m.Extra) > 1 || len(m.Extra) == 1 && m.Extra[0] != dns.RR(opt) {
		return nil, 0
	}
	if _, ok := m.Ns[0].(*dns.SOA); !ok {
		return nil, 0
	}
	key := uint64(len(m.Ns))
	for _, rr := range m.Ns {
		p := recordAddr(rr)
		if p == nil {
			return nil, 0
		}
		key = (key ^ uint64(uintptr(p))) * 0x9E3779B97F4A7C15
	}
	return m.Ns, key
}

// recordAddr is the address of rr where it is a record a section kept
// may hold (an SOA, RRSIG or NSEC record), or nil.
func recordAddr(rr dns.RR) unsafe.Pointer {
	switch rr := rr.(type) {
	case *dns.SOA:
		return unsafe.Pointer(rr)
	case *dns.RRSIG:
		return unsafe.Pointer(rr)
	case *dns.NSEC:
		return unsafe.Pointer(rr)
	}
	return nil
}

// negativeSlot is the slot of the section whose key is key: its top bits.
func (e *Encoder) negativeSlot(key uint64) *negative { return &e.negs[key>>(64-negativeBits)] }

// holdsSection says whether the template holds the section sec of key.
func (n *negative) holdsSection(sec []dns.RR, key uint64) bool {
	if n.key != key || n.nrec != len(sec) {
		return false
	}
	for i, rr := range sec {
		if recordAddr(rr) != n.recs[i] {
			return false
		}
	}
	return true
}

// fromTemplate writes question q and the authority section sec (of key)
// from its template after the header's place, and says whether it did;
// where not, e.buf is as it was. budget is what the message may take
// before the OPT.
func (e *Encoder) fromTemplate(sec []dns.RR, key uint64, q dns.Question, budget int) bool {
	n := e.negativeSlot(key)
	if !n.holdsSection(sec, key) || strings.IndexByte(q.Name, '\\') >= 0 {
		return false
	}
	start := len(e.buf)
	b, nl, err := e.names.scanPlain(e.buf, q.Name)
	if err != nil {
		return false
	}
	qlen := len(b) - start
	if end := len(b) + 4 + len(n.section); !n.holds(e.names.lower[:qlen], e.names.labels[:nl]) || end > budget || end > maxPointer {
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
// the section's names no more than that.
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
	return !hasLabel(n.below, key[labels[j-1]:at])
}

// hasLabel says whether list, labels in wire form one after the other (a
// length octet, then its octets), holds label.
func hasLabel(list, label []byte) bool {
	for b := list; len(b) > 0; b = b[1+b[0]:] {
		if string(b[:1+b[0]]) == string(label) {
			return true
		}
	}
	return false
}

// keepTemplate keeps, as the template of sec (of key), the authority
// section of the message just packed into e.buf (header, question, and
// sec after it, no OPT record yet), where the question ends in the SOA's
// owner and shares with the section's names no more than that, as
// fromTemplate asks of the next; ulen is what Msg.Len counts of the
// section. It keeps it the second time in a row the slot sees sec packed
// the long way; a question the slot's template does not hold leaves it as
// it is.
func (e *Encoder) keepTemplate(sec []dns.RR, key uint64, ulen int) {
	n := e.negativeSlot(key)
	if n.holdsSection(sec, key) {
		return
	}
	if n.seen != key {
		n.seen = key
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
	qkey := t.lower[:qend-headerLen]
	// In the encoder's scratch: the owner's lowercased wire form, then,
	// for each of the section's names below it, its label above it.
	soa := sec[0].(*dns.SOA)
	sc, err := appendName(e.scratch[:0], soa.Hdr.Name)
	if err != nil {
		return
	}
	ownerLen := len(sc)
	lowerWire(sc)
	sc, err = appendAboves(sc, ownerLen, sec)
	e.scratch = sc
	if err != nil {
		return
	}
	cand := negative{owner: sc[:ownerLen], below: sc[ownerLen:]}
	if !cand.holds(qkey, t.labels[:nl]) {
		return
	}
	// The section's pointers, each into the question's copy of the owner
	// (from lo) or into the section: the long way found no more, as holds
	// says it would not. They end owner names and the SOA's names; the
	// other records' RDATA holds names written whole.
	lo := qend - ownerLen
	at := qend + 4
	var ptrs [maxNegative + 2]uint16
	np := 0
	pointer := func(i int) (int, bool) { // the name at b[i:]: where it ends
		end, p, ok := namePointer(b, i)
		if !ok || p >= 0 && int(binary.BigEndian.Uint16(b[p:])&0x3FFF) < lo {
			return 0, false
		}
		if p >= 0 {
			ptrs[np] = uint16(p - at)
			np++
		}
		return end, true
	}
	i := at
	for _, rr := range sec {
		if i, ok = pointer(i); !ok || i+10 > len(b) {
			return
		}
		rdEnd := i + 10 + int(binary.BigEndian.Uint16(b[i+8:]))
		if _, soa := rr.(*dns.SOA); soa {
			i, ok = pointer(i + 10) // MNAME
			if ok {
				i, ok = pointer(i) // RNAME
			}
			if !ok || i+20 != rdEnd { // SERIAL to MINIMUM
				return
			}
		}
		i = rdEnd
	}
	if i != len(b) {
		return
	}
	for i, rr := range sec {
		n.recs[i] = recordAddr(rr)
	}
	n.nrec = len(sec)
	n.key, n.seen = key, 0
	n.owner = append(n.owner[:0], cand.owner...)
	n.below = append(n.below[:0], cand.below...)
	n.section = append(n.section[:0], b[at:]...)
	n.qlen = qend - headerLen
	n.ptrs = append(n.ptrs[:0], ptrs[:np]...)
	n.ulen = ulen
}

// appendAboves appends to sc, whose first ownerLen octets are the owner's
// lowercased wire form, the labels above it (appendAbove) of the names of
// a negative answer's section that may end in a pointer: every record's
// owner and the SOA's names. The others (a signature's signer, an NSEC
// record's next name) are written whole, whatever the question; a later
// name that could point into one of them further than the owner's labels
// has the same label above the owner, and is among these.
func appendAboves(sc []byte, ownerLen int, sec []dns.RR) ([]byte, error) {
	var err error
	for _, rr := range sec {
		if sc, err = appendAbove(sc, ownerLen, rr.Header().Name); err != nil {
			return sc, err
		}
	}
	soa := sec[0].(*dns.SOA)
	if sc, err = appendAbove(sc, ownerLen, soa.Ns); err == nil {
		sc, err = appendAbove(sc, ownerLen, soa.Mbox)
	}
	return sc, err
}

// appendAbove appends to sc, whose first ownerLen octets are the owner's
// lowercased wire form, the label of name just above the owner, where name
// ends in the owner, is longer, and that label is not in sc already.
func appendAbove(sc []byte, ownerLen int, name string) ([]byte, error) {
	w0 := len(sc)
	sc, err := appendName(sc, name)
	if err != nil {
		return sc, err
	}
	w := lowerWire(sc[w0:])
	sc = sc[:w0]
	cut := len(w) - ownerLen
	if cut <= 0 || string(w[cut:]) != string(sc[:ownerLen]) {
		return sc, nil
	}
	for j := 0; j < cut; j += int(w[j]) + 1 {
		if j+int(w[j])+1 != cut { // not yet the label above the owner
			continue
		}
		if above := w[j:cut]; !hasLabel(sc[ownerLen:], above) {
			return append(sc, above...), nil // copy's overlap is allowed: w lies at or after it
		}
		return sc, nil
	}
	return sc, nil
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
