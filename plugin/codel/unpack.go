package codel

import (
	"encoding/binary"

	"github.com/miekg/dns"
)

// unpacked is where a query read off the socket is unpacked: the message,
// and room for the sections of a common query, so that unpacking it makes
// nothing but its name's string.
type unpacked struct {
	names *nameRoom // where the question's name is made; nil: a string of its own
	msg   dns.Msg
	q     [1]dns.Question
	extra [1]dns.RR
	opt   dns.OPT
}

// Header bits, as miekg/dns's setHdr reads them.
const (
	bitQR = 1 << 15
	bitAA = 1 << 10
	bitTC = 1 << 9
	bitRD = 1 << 8
	bitRA = 1 << 7
	bitZ  = 1 << 6
	bitAD = 1 << 5
	bitCD = 1 << 4
)

// unpack unpacks m into u.msg exactly as dns.Msg.Unpack does. A query with
// one question and nothing else, or with one record more (its OPT, or a
// TSIG), is read here, into u's own question and record slots, and an OPT
// without options into u's own OPT: Unpack would allocate each. Anything else, or anything this reading
// finds wrong, is left to Unpack, so that every error is Unpack's own.
// TestUnpackIsUnpack and FuzzUnpack hold the two to the same result.
func (u *unpacked) unpack(m []byte) error {
	u.msg = dns.Msg{}
	if len(m) < 12 {
		return u.msg.Unpack(m)
	}
	bits := binary.BigEndian.Uint16(m[2:])
	qd, an := binary.BigEndian.Uint16(m[4:]), binary.BigEndian.Uint16(m[6:])
	ns, ar := binary.BigEndian.Uint16(m[8:]), binary.BigEndian.Uint16(m[10:])
	if qd != 1 || an != 0 || ns != 0 || ar > 1 {
		return u.msg.Unpack(m)
	}
	name, off, err := unpackName(m, 12, u.names)
	// A question cut short is Unpack's: it keeps what there is of it.
	if err != nil || off+4 > len(m) || (ar == 1 && off+4 == len(m)) {
		return u.msg.Unpack(m)
	}
	u.q[0] = dns.Question{Name: name, Qtype: binary.BigEndian.Uint16(m[off:]), Qclass: binary.BigEndian.Uint16(m[off+2:])}
	if ar == 1 {
		if o := m[off+4:]; len(o) >= 11 && o[0] == 0 && binary.BigEndian.Uint16(o[1:]) == dns.TypeOPT && binary.BigEndian.Uint16(o[9:]) == 0 {
			// An OPT without options, owned by the root, as most are.
			u.opt = dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT,
				Class: binary.BigEndian.Uint16(o[3:]), Ttl: binary.BigEndian.Uint32(o[5:])}}
			u.extra[0] = &u.opt
		} else {
			rr, _, err := dns.UnpackRR(m, off+4)
			if err != nil {
				return u.msg.Unpack(m)
			}
			u.extra[0] = rr
		}
	}

	h := &u.msg.MsgHdr
	h.Id = binary.BigEndian.Uint16(m)
	h.Response = bits&bitQR != 0
	h.Opcode = int(bits>>11) & 0xF
	h.Authoritative = bits&bitAA != 0
	h.Truncated = bits&bitTC != 0
	h.RecursionDesired = bits&bitRD != 0
	h.RecursionAvailable = bits&bitRA != 0
	h.Zero = bits&bitZ != 0
	h.AuthenticatedData = bits&bitAD != 0
	h.CheckingDisabled = bits&bitCD != 0
	h.Rcode = int(bits & 0xF)
	u.msg.Question = u.q[:]
	if ar == 1 {
		u.msg.Extra = u.extra[:]
		if opt, ok := u.extra[0].(*dns.OPT); ok {
			h.Rcode |= opt.ExtendedRcode() // as Unpack: the OPT's upper bits of the rcode
		}
	}
	return nil
}
