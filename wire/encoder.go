// Package wire encodes DNS messages for the fast path: one append-only pass
// into a caller's reused buffer, with name compression and truncation in
// the same pass and no allocation once the encoder is warm.
//
// The output unpacks to the same message as miekg/dns's Msg.Pack of the same
// message, truncated as CoreDNS's request.Scrub would truncate it, and is
// never longer. The package does not import CoreDNS.
package wire

import (
	"encoding/binary"
	"errors"
	"net"
	"strings"

	"github.com/miekg/dns"
)

const (
	headerLen  = 12
	maxMsgSize = dns.MaxMsgSize // 65535
	minMsgSize = dns.MinMsgSize // 512
)

var (
	errRcode    = errors.New("wire: rcode out of range, or extended rcode without an OPT record")
	errNilRR    = errors.New("wire: nil RR")
	errOPT      = errors.New("wire: more than one OPT record, or an OPT record not owned by the root")
	errRdlength = errors.New("wire: RDATA longer than 65535 octets")
)

// Encoder encodes messages. It keeps its compression tables and scratch
// space from one message to the next; it is not safe for concurrent use,
// so give each goroutine its own (a sync.Pool does).
type Encoder struct {
	buf   []byte
	names names

	// Fallbacks counts the records of the last message whose RDATA went
	// through miekg/dns because the fast path does not cover their type.
	Fallbacks int

	// Len is what miekg/dns's Msg.Len says of the last message encoded,
	// counted as it was written (msglen.go); -1 where it was not counted
	// (a message that asks for compression, one truncated). OPTLen is
	// its OPT record's share of it, 0 where it has none.
	Len, OPTLen int

	scratch []byte // for those records
	opt     []byte // the OPT record's RDATA, known before the sections
	dec     decoded
	n3      nsec3s // NSEC3 records' RDATA (nsec3s.go)
	scan    scanned

	// The owner of the last record, the pointer that names it, and its
	// uncompressed length.
	owner    string
	ownerPtr uint16
	ownerLen int

	// What Len counts of the names written (msglen.go): the last name's
	// uncompressed length, and, for the record being written, its RDATA
	// names' uncompressed lengths and the octets written for them, and
	// its type bitmap's octets.
	nameLen              int
	rdNameLen, rdNameOut int
	bitmapLen            int

	negs    [negativeSlots]negative // negative answers' templates (negative.go)
	negHits int                     // messages packed from one, for the tests
}

// NewEncoder returns an encoder ready for use.
func NewEncoder() *Encoder {
	e := &Encoder{}
	e.names.init()
	return e
}

// Encode appends m, in wire form, to dst[:0] and returns the result. size
// is the most the message may take, the client's UDP payload size (at least
// 512) or 65535 for TCP; 0 means 65535. What does not fit is left out by
// whole RRsets from the end, TC is set, and the OPT record is kept; but
// additional data an answer does not need (anything but a referral's) is
// left out without TC, and an RRset there that fits keeps its place
// without the signatures that do not (RFC 2181 section 9, RFC 4035
// section 3.1.1, as Knot DNS answers). The
// header and the questions are written whole, as miekg/dns's Truncate
// keeps them: a message whose questions alone pass size (a hundred of
// them; an answer has one) comes out longer than size, as it does there.
//
// Encode does not modify m. It fails where miekg/dns's Pack would, and on a
// message it chooses not to handle (more than one OPT record); the caller
// then falls back to miekg/dns.
func (e *Encoder) Encode(dst []byte, m *dns.Msg, size int) ([]byte, error) {
	if size <= 0 || size > maxMsgSize {
		size = maxMsgSize
	}
	if size < minMsgSize {
		size = minMsgSize
	}
	if e.names.reset() {
		e.scan.forget()
	}
	e.Fallbacks = 0
	e.Len, e.OPTLen = -1, 0

	if m.Rcode < 0 || m.Rcode > 0xFFF {
		return dst[:0], errRcode
	}
	opt, err := e.findOPT(m)
	if err != nil {
		return dst[:0], err
	}
	if opt == nil && m.Rcode > 0xF {
		return dst[:0], errRcode
	}
	budget := size
	if opt != nil {
		if err := e.packOPT(opt); err != nil {
			return dst[:0], err
		}
		budget -= 11 + len(e.opt)
	}

	// The header's place is held by zeros, so that len(e.buf) is always
	// the offset a compression pointer needs; it is written last.
	e.buf = append(dst[:0], make([]byte, headerLen)...)
	neg, negKey := negativeSection(m, opt)
	if neg != nil && e.fromTemplate(neg, negKey, m.Question[0], budget) {
		n := e.negativeSlot(negKey)
		e.counted(m, opt, len(e.buf)-len(n.section)+n.ulen) // the question is written whole
		return e.finish(m, opt, [3]int{0, len(neg), 0}, false), nil
	}
	ulen := headerLen
	for _, q := range m.Question {
		if err := e.name(q.Name, true); err != nil {
			return e.buf[:0], err
		}
		e.buf = append(e.buf, byte(q.Qtype>>8), byte(q.Qtype), byte(q.Qclass>>8), byte(q.Qclass))
		ulen += e.nameLen + 4
	}
	qulen := ulen

	// Records go in whole RRsets (an RRSIG with the set it covers); when
	// one would pass the budget, the message ends before its set.
	var counts [3]int
	var mark struct {
		n      int
		counts [3]int
	}
	truncated, dropped := false, false
	var prev *dns.RR_Header
	e.owner, e.ownerPtr = "", noPointer
sections:
	for si, sec := range [3][]dns.RR{m.Answer, m.Ns, m.Extra} {
		prev = nil
		for _, rr := range sec {
			if rr == nil {
				return e.buf[:0], errNilRR
			}
			if si == 2 && rr == dns.RR(opt) {
				continue
			}
			h := rr.Header()
			if si == 2 && h.Rrtype == dns.TypeOPT {
				return e.buf[:0], errOPT // not the *dns.OPT findOPT took
			}
			// The owner as spelled the last record's (e.owner is prev's
			// owner, or the last section's): compared once, for both the
			// RRset and the owner's pointer.
			same := h.Name == e.owner
			if !sameSet(prev, h, rr, same) {
				mark.n, mark.counts = len(e.buf), counts
			}
			prev = h
			start, before := len(e.buf), counts
			n, err := e.rr(rr, h, same)
			if err != nil {
				return e.buf[:0], err
			}
			ulen += n
			counts[si]++
			if len(e.buf) > budget {
				if si == 2 && !referral(m) {
					// Additional data the answer does not need: left out
					// without TC (RFC 2181 section 9). A signature that
					// does not fit goes alone, its set, written before
					// it, kept (RFC 4035 section 3.1.1), as Knot does.
					e.buf, counts = e.buf[:mark.n], mark.counts
					if h.Rrtype == dns.TypeRRSIG && before != mark.counts {
						e.buf, counts = e.buf[:start], before
					}
					dropped = true
					break sections
				}
				e.buf, counts = e.buf[:mark.n], mark.counts
				truncated = true
				break sections
			}
		}
	}

	if neg != nil && counts == [3]int{0, len(neg), 0} {
		e.keepTemplate(neg, negKey, ulen-qulen)
	}
	if !truncated && !dropped {
		e.counted(m, opt, ulen)
	}
	return e.finish(m, opt, counts, truncated), nil
}

// referral reports whether m is a referral: no answer, not authoritative,
// and NS records in authority. Its additional section holds the glue the
// delegation needs, which RFC 9471 has the client ask for again over TCP
// (TC) where it does not fit.
func referral(m *dns.Msg) bool {
	if m.Authoritative || len(m.Answer) != 0 {
		return false
	}
	for _, rr := range m.Ns {
		if rr.Header().Rrtype == dns.TypeNS {
			return true
		}
	}
	return false
}

// finish appends m's OPT record, where it has one, and writes the header
// of the message in e.buf, whose sections hold counts records.
func (e *Encoder) finish(m *dns.Msg, opt *dns.OPT, counts [3]int, truncated bool) []byte {
	arcount := counts[2]
	if opt != nil {
		e.buf = append(e.buf, 0, byte(dns.TypeOPT>>8), byte(dns.TypeOPT&0xFF), byte(opt.Hdr.Class>>8), byte(opt.Hdr.Class))
		ttl := opt.Hdr.Ttl&0x00FFFFFF | uint32(m.Rcode>>4)<<24
		e.buf = binary.BigEndian.AppendUint32(e.buf, ttl)
		e.buf = binary.BigEndian.AppendUint16(e.buf, uint16(len(e.opt)))
		e.buf = append(e.buf, e.opt...)
		arcount++
	}

	h := e.buf[:headerLen]
	binary.BigEndian.PutUint16(h[0:], m.Id)
	binary.BigEndian.PutUint16(h[2:], flags(m, truncated))
	binary.BigEndian.PutUint16(h[4:], uint16(len(m.Question)))
	binary.BigEndian.PutUint16(h[6:], uint16(counts[0]))
	binary.BigEndian.PutUint16(h[8:], uint16(counts[1]))
	binary.BigEndian.PutUint16(h[10:], uint16(arcount))
	return e.buf
}

func flags(m *dns.Msg, truncated bool) uint16 {
	return uint16(m.Opcode)<<11 | uint16(m.Rcode&0xF) |
		bit(m.Response)<<15 | bit(m.Authoritative)<<10 | bit(m.Truncated || truncated)<<9 |
		bit(m.RecursionDesired)<<8 | bit(m.RecursionAvailable)<<7 | bit(m.Zero)<<6 |
		bit(m.AuthenticatedData)<<5 | bit(m.CheckingDisabled)<<4
}

func bit(b bool) uint16 {
	if b {
		return 1
	}
	return 0
}

// findOPT returns the message's OPT record as miekg/dns finds it (the last
// RR of type OPT in the additional section). A second one is refused: the
// message is malformed, and truncation could not keep both. It looks only
// at *dns.OPT values, without a call through the RR interface; a record of
// another Go type whose header says OPT is refused as the sections are
// written (see Encode).
func (e *Encoder) findOPT(m *dns.Msg) (*dns.OPT, error) {
	var opt *dns.OPT
	for _, rr := range m.Extra {
		o, ok := rr.(*dns.OPT)
		if !ok || o == nil || o.Hdr.Rrtype != dns.TypeOPT {
			continue
		}
		if opt != nil || o.Hdr.Name != "." {
			return nil, errOPT
		}
		opt = o
	}
	return opt, nil
}

// sameSet says whether rr, whose header is h, belongs to the RRset whose
// header is p, or is the RRSIG that covers it, so truncation never splits
// them. same says that the two owners are spelled alike.
func sameSet(p, h *dns.RR_Header, rr dns.RR, same bool) bool {
	if p == nil || p.Class != h.Class || !same && !equalFold(p.Name, h.Name) {
		return false
	}
	if p.Rrtype == h.Rrtype {
		return true
	}
	sig, ok := rr.(*dns.RRSIG)
	return ok && h.Rrtype == dns.TypeRRSIG && sig.TypeCovered == p.Rrtype
}

// equalFold says whether names a and b are equal but for the case of
// their ASCII letters.
func equalFold(a, b string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := 0; i < len(a); i++ {
		x, y := a[i], b[i]
		if 'A' <= x && x <= 'Z' {
			x += 'a' - 'A'
		}
		if 'A' <= y && y <= 'Z' {
			y += 'a' - 'A'
		}
		if x != y {
			return false
		}
	}
	return true
}

// rr appends one resource record, whose header is h; same says that its
// owner is spelled as the last one written (e.owner). It returns what
// Msg.Len counts of the record (msglen.go).
func (e *Encoder) rr(rr dns.RR, h *dns.RR_Header, same bool) (int, error) {
	// The records of an RRset share their owner: the pointer written for
	// the last owner serves again without a lookup.
	if same && e.ownerPtr != noPointer {
		e.buf = append(e.buf, byte(e.ownerPtr>>8)|0xC0, byte(e.ownerPtr))
	} else {
		ptr, err := e.pointedName(h.Name, true)
		if err != nil {
			return 0, err
		}
		e.owner, e.ownerPtr, e.ownerLen = h.Name, ptr, e.nameLen
	}
	e.buf = append(e.buf, byte(h.Rrtype>>8), byte(h.Rrtype), byte(h.Class>>8), byte(h.Class),
		byte(h.Ttl>>24), byte(h.Ttl>>16), byte(h.Ttl>>8), byte(h.Ttl), 0, 0)
	start := len(e.buf)
	e.rdNameLen, e.rdNameOut = 0, 0
	// Addresses, the commonest RDATA, are written here rather than in the
	// large switch of rdata.
	covered := true
	if a, ok := rr.(*dns.A); ok && isV4(a.A) {
		e.buf = append(e.buf, a.A[len(a.A)-4:]...)
	} else if c, err := e.rdata(rr); err != nil {
		return 0, err
	} else if !c {
		if err := e.fallback(rr, start); err != nil {
			return 0, err
		}
		covered = false
	}
	n := len(e.buf) - start
	if n > 0xFFFF {
		return 0, errRdlength
	}
	binary.BigEndian.PutUint16(e.buf[start-2:], uint16(n))
	if !covered {
		return dns.Len(rr), nil
	}
	return e.ownerLen + 10 + e.rdataLen(rr, n), nil
}

// isV4 says whether ip holds an IPv4 address, in four octets or in the
// sixteen of ::ffff:a.b.c.d that Go's parsers give.
func isV4(ip net.IP) bool {
	switch len(ip) {
	case net.IPv4len:
		return true
	case net.IPv6len:
		return binary.LittleEndian.Uint64(ip) == 0 && binary.BigEndian.Uint32(ip[8:]) == 0xFFFF
	}
	return false
}

// name appends the domain name s. compress says whether it may end in a
// pointer: owner names, and names in the RDATA of the RFC 1035 types (RFC
// 3597, section 4). Every name written is remembered for later ones.
func (e *Encoder) name(s string, compress bool) error {
	at := len(e.buf)
	_, err := e.pointedName(s, compress)
	e.rdNameLen += e.nameLen
	e.rdNameOut += len(e.buf) - at
	return err
}

// pointedName is name, and returns the offset a later pointer to the same
// name would hold, or noPointer.
func (e *Encoder) pointedName(s string, compress bool) (uint16, error) {
	e.nameLen = 1 // what Msg.Len counts for the root, and for no name
	switch s {
	case ".":
		e.buf = append(e.buf, 0)
		return noPointer, nil // one octet: a pointer would be longer
	case "":
		return noPointer, nil // as miekg/dns: nothing, for RRs of dynamic updates
	}
	t := &e.names
	// A name met before in this message is answered from where it was
	// written: its remembered scan's slot says, or the tables of the
	// names not remembered.
	sc := e.scan.find(s)
	known := sc != nil && sc.gen == t.gen
	var w *whole
	var h uint64
	if sc == nil {
		w, h = t.findWhole(s)
	}
	if known || w != nil {
		ptr, wire := sc.whole(w)
		e.nameLen = len(wire)
		switch {
		case compress && ptr != noPointer:
			e.buf = append(e.buf, byte(ptr>>8)|0xC0, byte(ptr))
			return ptr, nil
		case !compress:
			e.buf = append(e.buf, wire...)
			return ptr, nil
		}
		// Known, but written past the pointer limit: its suffixes may still
		// be reachable.
	}

	start := len(e.buf)
	if sc != nil && !known && compress && !t.hashed && len(t.listed) < t.maxList {
		return e.listRemembered(sc, start), nil
	}
	plain := sc != nil || strings.IndexByte(s, '\\') < 0
	if !t.hashed && (!plain || len(t.listed) >= t.maxList) {
		t.promote()
	}
	// The name's wire form in its own case, lowercased, and its label
	// starts: a remembered scan's, kept for the whole message, or the
	// scratch of scanPlain and index. A remembered name is appended once
	// its cut is known, only the labels before it; the others are in e.buf
	// already, whole.
	var own, key []byte
	var labels []uint8
	var err error
	remembered := sc != nil
	switch {
	case remembered:
		own, key, labels = sc.parts()
		if t.hashed { // register and findSuffix work in the scratch
			copy(t.lower[:], key)
			copy(t.labels[:], labels)
			t.hashPlain(own, s, len(labels))
		}
	case plain:
		var nl int
		if e.buf, nl, err = t.scanPlain(e.buf, s); err == nil {
			own, key, labels = e.buf[start:], t.lower[:len(s)+1], t.labels[:nl]
			if sc = e.scan.remember(s, t.gen, own, key, labels); sc != nil {
				own, key, labels = sc.parts()
			}
			if t.hashed {
				t.hashPlain(e.buf[start:], s, nl)
			}
		}
	default:
		if e.buf, err = appendName(e.buf, s); err == nil {
			own = e.buf[start:]
			key, labels = t.lower[:len(own)], t.labels[:t.index(own)]
		}
	}
	if err != nil {
		return noPointer, err
	}
	e.nameLen = len(own)
	kept := sc != nil
	nl := len(labels)
	cut, target := nl, 0
	var from listedSuffix
	switch {
	case !compress:
	case !t.hashed:
		cut, target, from = t.findListed(key, labels)
	case t.nsuffix > 0:
		for j := 0; j < nl; j++ {
			if off, ok := t.findSuffix(t.lower[labels[j]:len(key)], t.hashes[j]); ok {
				cut, target = j, off
				break
			}
		}
	}
	at := start
	if cut == 0 {
		at = target
	}
	if at >= maxPointer {
		at = noPointer
	}
	switch {
	case known || w != nil: // already where the next one looks
	case kept:
		sc.gen, sc.ptr = t.gen, uint16(at)
	default:
		t.addWhole(s, h, at, own)
	}
	switch {
	case !t.hashed:
		if cut > 0 {
			t.list(key, labels, kept, cut, start, from)
		}
	default:
		t.register(own, cut, start)
	}
	if cut == nl {
		if remembered {
			e.buf = append(e.buf, own...)
		}
		return uint16(at), nil
	}
	// The labels before the cut are new here, and remembered above; the
	// rest is a pointer.
	if remembered {
		e.buf = append(e.buf, own[:labels[cut]]...)
	} else {
		e.buf = e.buf[:start+int(labels[cut])]
	}
	e.buf = append(e.buf, byte(target>>8)|0xC0, byte(target))
	return uint16(at), nil
}

// listRemembered is pointedName's commonest way, apart so that it keeps
// few values across its calls: a name remembered from an earlier message,
// new in this one, which is small enough that its names are listed, in a
// place where it may end in a pointer.
func (e *Encoder) listRemembered(sc *scannedSlot, start int) uint16 {
	t := &e.names
	own, key, labels := sc.parts()
	e.nameLen = len(own)
	cut, target, from := t.findListed(key, labels)
	at := start
	if cut == 0 {
		at = target
	}
	if at >= maxPointer {
		at = noPointer
	}
	sc.gen, sc.ptr = t.gen, uint16(at)
	if cut > 0 {
		t.list(key, labels, true, cut, start, from)
	}
	if cut == len(labels) {
		e.buf = append(e.buf, own...)
		return uint16(at)
	}
	e.buf = append(append(e.buf, own[:labels[cut]]...), byte(target>>8)|0xC0, byte(target))
	return uint16(at)
}
