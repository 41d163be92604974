package wire

import (
	"encoding/base64"

	"github.com/miekg/dns"
)

// A server that counts its answers' sizes, as CoreDNS's prometheus plugin
// does, reads Msg.Len of each: a walk of the whole message again, every
// name scanned for escapes, through the RR interface, and the first read
// of each record for an answer not kept (the NSEC3 flood answered 1.044x
// the queries a second with no size counted at all, bench/README.md,
// 2026-12-06). The encoder counts the same number as it writes: each
// name's uncompressed length is what it found or remembered of the name,
// and each record's share what it wrote, or, for the types where
// miekg/dns counts otherwise than it packs (a signature's base64 decoded
// length rounded up, a string's escaped text, NSEC3's next hash as text,
// an empty type bitmap as two octets),
// miekg/dns's own formula. TestLenIsMsgLen holds it to Msg.Len.

// counted sets e.Len to ulen, what Msg.Len counts of m but its OPT record
// (opt, or nil), plus that record's, unless m asks for compression, which
// Msg.Len then counts its own way.
func (e *Encoder) counted(m *dns.Msg, opt *dns.OPT, ulen int) {
	if m.Compress {
		return
	}
	if opt != nil {
		e.OPTLen = dns.Len(opt)
	}
	e.Len = ulen + e.OPTLen
}

// rdataLen is what Msg.Len counts of rr's RDATA, of which n octets were
// written: those written for its names (e.rdNameOut) counted at their
// uncompressed length (e.rdNameLen), or, for the types miekg/dns counts
// otherwise, its formula.
func (e *Encoder) rdataLen(rr dns.RR, n int) int {
	switch rr := rr.(type) {
	case *dns.RRSIG:
		return 18 + e.rdNameLen + base64.StdEncoding.DecodedLen(len(rr.Signature))
	case *dns.NSEC:
		return e.rdNameLen + bitmapCount(e.bitmapLen)
	case *dns.NSEC3:
		return 6 + len(rr.Salt)/2 + 1 + len(rr.NextDomain) + 1 + bitmapCount(e.bitmapLen)
	case *dns.DNSKEY:
		return 4 + base64.StdEncoding.DecodedLen(len(rr.PublicKey))
	case *dns.CDNSKEY:
		return 4 + base64.StdEncoding.DecodedLen(len(rr.PublicKey))
	case *dns.TXT:
		return stringsLen(rr.Txt)
	case *dns.SPF:
		return stringsLen(rr.Txt)
	case *dns.HINFO:
		return len(rr.Cpu) + 1 + len(rr.Os) + 1
	case *dns.CAA:
		return 1 + len(rr.Tag) + 1 + len(rr.Value)
	case *dns.NAPTR:
		return 4 + len(rr.Flags) + 1 + len(rr.Service) + 1 + len(rr.Regexp) + 1 + e.rdNameLen
	case *dns.SVCB, *dns.HTTPS:
		return dns.Len(rr) - e.ownerLen - 10 // each key its own way
	}
	return n - e.rdNameOut + e.rdNameLen
}

// bitmapCount is what Msg.Len counts of a type bitmap written in n
// octets: n, but 2 for an empty one, which is written as nothing.
func bitmapCount(n int) int {
	if n == 0 {
		return 2
	}
	return n
}

// stringsLen is what Msg.Len counts of character-strings: each one's text
// as spelled, escapes and all, and its length octet.
func stringsLen(ss []string) int {
	l := 0
	for _, s := range ss {
		l += len(s) + 1
	}
	return l
}
