package codel

import (
	"encoding/binary"
	"encoding/hex"
	"unsafe"

	"github.com/miekg/dns"
)

// unpacked is where a query read off the socket is unpacked: the message,
// and room for the sections of a common query, so that unpacking it makes
// nothing but its name's string.
type unpacked struct {
	names   *nameRoom // where the question's name is made; nil: a string of its own
	msg     dns.Msg
	q       [1]dns.Question
	extra   [1]dns.RR
	opt     dns.OPT
	options [1]dns.EDNS0
	cookie  dns.EDNS0_COOKIE
	// cookieHex is where a COOKIE option's text is made when the query's
	// strings are the worker's (names set): the packet's, as the OPT is,
	// until the query ends.
	cookieHex [2 * maxCookie]byte
}

// maxCookie is the longest COOKIE option: a client cookie of 8 octets and
// a server cookie of 32 at most (RFC 7873 section 4).
const maxCookie = 40

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
		if !u.unpackOPT(m[off+4:]) {
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

// unpackOPT reads o, the query's last record, into u's own OPT where it is
// one owned by the root, as most are, with no option or one COOKIE option
// (RFC 7873), which resolvers such as BIND send with every query, and
// reports whether it did. dns.UnpackRR allocated the OPT, the option and
// its text: a query with a cookie took 0.85x the queries a second of one
// without (bench/README.md, 2026-12-06).
func (u *unpacked) unpackOPT(o []byte) bool {
	if !rootOPT(o) {
		return false
	}
	rdlen := int(binary.BigEndian.Uint16(o[9:]))
	u.opt = dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT,
		Class: binary.BigEndian.Uint16(o[3:]), Ttl: binary.BigEndian.Uint32(o[5:]), Rdlength: uint16(rdlen)}}
	if rdlen != 0 {
		data := o[11:]
		if len(data) < rdlen || rdlen < 4 || rdlen-4 > maxCookie ||
			binary.BigEndian.Uint16(data) != dns.EDNS0COOKIE || int(binary.BigEndian.Uint16(data[2:])) != rdlen-4 {
			return false
		}
		cookie := data[4:rdlen]
		if u.names != nil {
			hex.Encode(u.cookieHex[:], cookie)
			u.cookie = dns.EDNS0_COOKIE{Cookie: unsafe.String(&u.cookieHex[0], 2*len(cookie))} // as Unpack, Code left 0
		} else {
			u.cookie = dns.EDNS0_COOKIE{Cookie: hex.EncodeToString(cookie)}
		}
		u.options[0] = &u.cookie
		u.opt.Option = u.options[:]
	}
	u.extra[0] = &u.opt
	return true
}

// rootOPT says whether the record at the start of o is an OPT record owned
// by the root, whole to its RDLENGTH: its owner (the root), TYPE (OPT),
// CLASS (the UDP size), TTL (the extended RCODE, the version, and the
// flags, DO first) and RDLENGTH.
func rootOPT(o []byte) bool {
	return len(o) >= 11 && o[0] == 0 && binary.BigEndian.Uint16(o[1:]) == dns.TypeOPT
}
