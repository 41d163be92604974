package wire

import (
	"encoding/binary"
	"encoding/hex"

	"github.com/miekg/dns"
)

// fallback appends the RDATA of a type the fast path does not cover, as
// miekg/dns packs it. The record is packed, under the root as its owner,
// where its RDATA will stand in the message, so that the names miekg/dns
// finds in it land in our compression table at their true offsets: a later
// name may then point at them, as it would in miekg/dns's own message.
func (e *Encoder) fallback(rr dns.RR, start int) error {
	c := dns.Copy(rr)
	c.Header().Name = "."
	at := start - 11 // root owner (1) + type, class, TTL, RDLENGTH (10)
	if need := start + maxMsgSize + 1; len(e.scratch) < need {
		e.scratch = make([]byte, need)
	}
	found := make(map[string]int)
	end, err := dns.PackRR(c, e.scratch[:cap(e.scratch)], at, found, false)
	if err != nil {
		return err
	}
	e.buf = append(e.buf, e.scratch[start:end]...)
	e.names.promote() // these names are indexed from their wire form, into the suffix table
	for _, off := range found {
		if off < start || off >= len(e.buf) {
			continue
		}
		w := e.buf[off:]
		n := literalLen(w)
		if n == 0 {
			continue
		}
		nl := e.names.index(w[:n])
		e.names.register(w[:n], nl, off)
	}
	e.Fallbacks++
	return nil
}

// literalLen returns the length of the uncompressed wire name at the start
// of w, or 0 when it is not one.
func literalLen(w []byte) int {
	i := 0
	for i < len(w) && i < 256 {
		l := int(w[i])
		if l == 0 {
			return i + 1
		}
		if l > 63 {
			return 0
		}
		i += l + 1
	}
	return 0
}

// packOPT writes the OPT record's RDATA to e.opt before the sections, so
// that truncation knows what the record will take.
func (e *Encoder) packOPT(opt *dns.OPT) error {
	var err error
	e.opt, err = e.appendOptions(e.opt[:0], opt)
	return err
}

// appendOptions writes EDNS(0) options. The ones a server sends (cookie,
// NSID, padding, extended error, keepalive) are written here; any other
// goes through miekg/dns, counted.
func (e *Encoder) appendOptions(b []byte, opt *dns.OPT) ([]byte, error) {
	start := len(b)
	for _, o := range opt.Option {
		var err error
		b = binary.BigEndian.AppendUint16(b, o.Option())
		at := len(b)
		b = append(b, 0, 0)
		switch o := o.(type) {
		case *dns.EDNS0_COOKIE:
			b, err = hex.AppendDecode(b, bytesOf(o.Cookie))
		case *dns.EDNS0_NSID:
			b, err = hex.AppendDecode(b, bytesOf(o.Nsid))
		case *dns.EDNS0_PADDING:
			b = append(b, o.Padding...)
		case *dns.EDNS0_EDE:
			b = binary.BigEndian.AppendUint16(b, o.InfoCode)
			b = append(b, o.ExtraText...)
		case *dns.EDNS0_TCP_KEEPALIVE:
			if o.Timeout > 0 {
				b = binary.BigEndian.AppendUint16(b, o.Timeout)
			}
		default:
			return e.packOptions(b[:start], opt)
		}
		if err != nil {
			return b, err
		}
		binary.BigEndian.PutUint16(b[at:], uint16(len(b)-at-2))
	}
	return b, nil
}

// packOptions packs all of opt's options with miekg/dns.
func (e *Encoder) packOptions(b []byte, opt *dns.OPT) ([]byte, error) {
	if len(e.scratch) < maxMsgSize+1 {
		e.scratch = make([]byte, maxMsgSize+1)
	}
	end, err := dns.PackRR(opt, e.scratch[:cap(e.scratch)], 0, nil, false)
	if err != nil {
		return b, err
	}
	e.Fallbacks++
	// The RDATA follows the owner name (the root's one octet, unless an
	// OPT record stands elsewhere under another name: the fuzzer sent one)
	// and ten octets of type, class, TTL and length.
	name := 0
	for name < end && e.scratch[name] != 0 {
		name += int(e.scratch[name]) + 1
	}
	return append(b, e.scratch[name+1+10:end]...), nil
}
