package replay

import (
	"encoding/binary"

	"github.com/miekg/dns"
)

// MaxKey is the most octets a key takes: a name in presentation form,
// every octet escaped (4 × 255), and the fields after it.
const MaxKey = 4*255 + keyFields

const keyFields = 2 + 2 + 1 + 2 + 4

// Key appends to dst the key of request r: what of r the answer depends
// on, so that two requests with the same key get the same answer (but
// the ID) from the same version of a zone. It reports false for a request
// whose answer is not to be kept: anything but one question and at most
// an OPT record with no option but COOKIE (another may be answered per
// client: padding, client subnet), or a signed one.
//
// A COOKIE option (RFC 7873), which resolvers such as BIND send with every
// query, is no part of the key: zonestore answers a query with a cookie as
// it answers one without, as Knot does without its cookies module, and a
// plugin that answers cookies (rrl's) says it does not replay a query
// that carries one (Writer.Replays). Refused, every such query was looked
// up and packed again: with a client cookie on every query the full chain
// answered about 0.79x Knot's queries a second; keyed, and with codel's
// reader reading the option in place, 1.20x (bench/README.md, 2026-12-06).
//
// The key is the question's name as given (its case is the answer's),
// its type and class, RD (the answer copies it; the opcode is a query's,
// checked by whoever asks for a key), the OPT record's
// presence, UDP size and TTL field (extended rcode, version, DO and the
// other flags), and whether the request came over a stream (TCP, TLS,
// HTTPS: stream): a stream's answer is packed to 65,535 octets whatever
// the request's UDP size, and is never truncated. CD is no part of it:
// zonestore clears it in every answer (RFC 4035 section 3.1.6), so that
// a validating resolver's query, CD set, and a stub's share one answer.
func Key(dst []byte, r *dns.Msg, stream bool) ([]byte, bool) {
	if len(r.Question) != 1 || len(r.Answer) != 0 || len(r.Ns) != 0 || len(r.Extra) > 1 {
		return dst, false
	}
	var opt *dns.OPT
	if len(r.Extra) == 1 {
		o, ok := r.Extra[0].(*dns.OPT)
		if !ok || !onlyCookies(o.Option) {
			return dst, false
		}
		opt = o
	}
	q := r.Question[0]
	dst = append(dst, q.Name...)
	var flags byte
	if r.RecursionDesired {
		flags |= 1
	}
	if stream {
		flags |= 8
	}
	var size uint16
	var ttl uint32
	if opt != nil {
		flags |= 4
		size, ttl = opt.Hdr.Class, opt.Hdr.Ttl
	}
	// The fields after the name have a fixed length: a key is read from
	// its end, and two keys are equal only where names and fields are.
	dst = binary.BigEndian.AppendUint16(dst, q.Qtype)
	dst = binary.BigEndian.AppendUint16(dst, q.Qclass)
	dst = append(dst, flags)
	dst = binary.BigEndian.AppendUint16(dst, size)
	dst = binary.BigEndian.AppendUint32(dst, ttl)
	return dst, true
}

// overStream reports whether key (a Key) is a request's over a stream.
func overStream(key []byte) bool { return key[len(key)-keyFields+4]&8 != 0 }

// onlyCookies reports whether every option of an OPT record is a COOKIE.
func onlyCookies(options []dns.EDNS0) bool {
	for _, o := range options {
		if o.Option() != dns.EDNS0COOKIE {
			return false
		}
	}
	return true
}
