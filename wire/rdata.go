package wire

import (
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"unsafe"

	"github.com/miekg/dns"
)

var (
	errA      = errors.New("wire: A record without a 4-octet address")
	errAAAA   = errors.New("wire: AAAA record without a 16-octet address")
	errString = errors.New("wire: character-string longer than 255 octets")
	errBitmap = errors.New("wire: NSEC type bitmap out of order")
	errSVCB   = errors.New("wire: SVCB parameter of an unexpected type")
)

var base32Hex = base32.HexEncoding.WithPadding(base32.NoPadding)

// rdata appends the RDATA of the types the fast path covers, written as
// miekg/dns writes them, field for field. covered is false for any other
// type: nothing was written, and the caller falls back.
func (e *Encoder) rdata(rr dns.RR) (covered bool, err error) {
	b := e.buf
	switch rr := rr.(type) {
	case *dns.A:
		switch len(rr.A) {
		case 0: // allowed, for dynamic updates
		case 4, 16:
			a := rr.A.To4()
			if a == nil {
				a = make([]byte, 4) // as miekg/dns: a zero address
			}
			b = append(b, a...)
		default:
			return true, errA
		}
	case *dns.AAAA:
		switch len(rr.AAAA) {
		case 0:
		case 16:
			b = append(b, rr.AAAA...)
		default:
			return true, errAAAA
		}
	case *dns.NS:
		return true, e.name(rr.Ns, true)
	case *dns.CNAME:
		return true, e.name(rr.Target, true)
	case *dns.PTR:
		return true, e.name(rr.Ptr, true)
	case *dns.MB:
		return true, e.name(rr.Mb, true)
	case *dns.MD:
		return true, e.name(rr.Md, true)
	case *dns.MF:
		return true, e.name(rr.Mf, true)
	case *dns.MG:
		return true, e.name(rr.Mg, true)
	case *dns.MR:
		return true, e.name(rr.Mr, true)
	case *dns.DNAME:
		return true, e.name(rr.Target, false)
	case *dns.MINFO:
		if err := e.name(rr.Rmail, true); err != nil {
			return true, err
		}
		return true, e.name(rr.Email, true)
	case *dns.MX:
		e.buf = binary.BigEndian.AppendUint16(b, rr.Preference)
		return true, e.name(rr.Mx, true)
	case *dns.SOA:
		if err := e.name(rr.Ns, true); err != nil {
			return true, err
		}
		if err := e.name(rr.Mbox, true); err != nil {
			return true, err
		}
		b = e.buf
		b = binary.BigEndian.AppendUint32(b, rr.Serial)
		b = binary.BigEndian.AppendUint32(b, rr.Refresh)
		b = binary.BigEndian.AppendUint32(b, rr.Retry)
		b = binary.BigEndian.AppendUint32(b, rr.Expire)
		b = binary.BigEndian.AppendUint32(b, rr.Minttl)
	case *dns.SRV:
		b = binary.BigEndian.AppendUint16(b, rr.Priority)
		b = binary.BigEndian.AppendUint16(b, rr.Weight)
		e.buf = binary.BigEndian.AppendUint16(b, rr.Port)
		return true, e.name(rr.Target, false)
	case *dns.NAPTR:
		b = binary.BigEndian.AppendUint16(b, rr.Order)
		b = binary.BigEndian.AppendUint16(b, rr.Preference)
		for _, s := range [...]string{rr.Flags, rr.Service, rr.Regexp} {
			if b, err = appendString(b, s); err != nil {
				return true, err
			}
		}
		e.buf = b
		return true, e.name(rr.Replacement, false)
	case *dns.TXT:
		b, err = appendStrings(b, rr.Txt)
	case *dns.SPF:
		b, err = appendStrings(b, rr.Txt)
	case *dns.HINFO:
		if b, err = appendString(b, rr.Cpu); err == nil {
			b, err = appendString(b, rr.Os)
		}
	case *dns.CAA:
		b = append(b, rr.Flag)
		if b, err = appendString(b, rr.Tag); err == nil {
			b, err = appendOctets(b, rr.Value)
		}
	case *dns.DS:
		b, err = appendDS(b, rr)
	case *dns.CDS:
		b, err = appendDS(b, &rr.DS)
	case *dns.DNSKEY:
		b, err = e.appendDNSKEY(b, rr)
	case *dns.CDNSKEY:
		b, err = e.appendDNSKEY(b, &rr.DNSKEY)
	case *dns.RRSIG:
		b = binary.BigEndian.AppendUint16(b, rr.TypeCovered)
		b = append(b, rr.Algorithm, rr.Labels)
		b = binary.BigEndian.AppendUint32(b, rr.OrigTtl)
		b = binary.BigEndian.AppendUint32(b, rr.Expiration)
		b = binary.BigEndian.AppendUint32(b, rr.Inception)
		e.buf = binary.BigEndian.AppendUint16(b, rr.KeyTag)
		if err := e.name(rr.SignerName, false); err != nil {
			return true, err
		}
		b, err = e.dec.appendBase64(e.buf, rr.Signature)
	case *dns.NSEC:
		if err := e.name(rr.NextDomain, false); err != nil {
			return true, err
		}
		b, err = appendBitmap(e.buf, rr.TypeBitMap)
		e.bitmapLen = len(b) - len(e.buf)
	case *dns.NSEC3:
		b, err = e.appendNSEC3(b, rr)
	case *dns.NSEC3PARAM:
		b = append(b, rr.Hash, rr.Flags)
		b = binary.BigEndian.AppendUint16(b, rr.Iterations)
		b = append(b, rr.SaltLength)
		if rr.Salt != "-" {
			b, err = hex.AppendDecode(b, bytesOf(rr.Salt))
		}
	case *dns.TLSA:
		b = append(b, rr.Usage, rr.Selector, rr.MatchingType)
		b, err = hex.AppendDecode(b, bytesOf(rr.Certificate))
	case *dns.SSHFP:
		b = append(b, rr.Algorithm, rr.Type)
		b, err = hex.AppendDecode(b, bytesOf(rr.FingerPrint))
	case *dns.RFC3597:
		b, err = hex.AppendDecode(b, bytesOf(rr.Rdata))
	case *dns.LOC:
		b = append(b, rr.Version, rr.Size, rr.HorizPre, rr.VertPre)
		b = binary.BigEndian.AppendUint32(b, rr.Latitude)
		b = binary.BigEndian.AppendUint32(b, rr.Longitude)
		b = binary.BigEndian.AppendUint32(b, rr.Altitude)
	case *dns.SVCB:
		return e.svcb(rr)
	case *dns.HTTPS:
		return e.svcb(&rr.SVCB)
	case *dns.OPT:
		b, err = e.appendOptions(b, rr)
	default:
		return false, nil
	}
	e.buf = b
	return true, err
}

// bytesOf views a string's bytes without copying; the decoders only read.
func bytesOf(s string) []byte { return unsafe.Slice(unsafe.StringData(s), len(s)) }

func appendDS(b []byte, ds *dns.DS) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, ds.KeyTag)
	b = append(b, ds.Algorithm, ds.DigestType)
	return hex.AppendDecode(b, bytesOf(ds.Digest))
}

// appendNSEC3 appends rr's RDATA: remembered (nsec3s.go), or packed and
// remembered. It sets bitmapLen, for Len.
func (e *Encoder) appendNSEC3(b []byte, rr *dns.NSEC3) ([]byte, error) {
	if s := e.n3.find(rr); s != nil {
		e.bitmapLen = s.bitmapLen
		return append(b, s.wire...), nil
	}
	start := len(b)
	b = append(b, rr.Hash, rr.Flags)
	b = binary.BigEndian.AppendUint16(b, rr.Iterations)
	b = append(b, rr.SaltLength)
	var err error
	if rr.Salt != "-" {
		if b, err = hex.AppendDecode(b, bytesOf(rr.Salt)); err != nil {
			return b, err
		}
	}
	b = append(b, rr.HashLength)
	if b, err = e.appendBase32(b, rr.NextDomain); err != nil {
		return b, err
	}
	at := len(b)
	if b, err = appendBitmap(b, rr.TypeBitMap); err != nil {
		return b, err
	}
	e.bitmapLen = len(b) - at
	e.n3.keep(rr, b[start:], e.bitmapLen)
	return b, nil
}

func (e *Encoder) appendDNSKEY(b []byte, k *dns.DNSKEY) ([]byte, error) {
	b = binary.BigEndian.AppendUint16(b, k.Flags)
	b = append(b, k.Protocol, k.Algorithm)
	return e.dec.appendBase64(b, k.PublicKey)
}

// appendBase32 decodes NSEC3's next hashed owner, which miekg/dns accepts in
// either case: eight characters at a time when it is made of whole groups
// of eight valid ones, as a hash always is (decodeBase32Hex); otherwise as
// miekg/dns does, through encoding/base32.
func (e *Encoder) appendBase32(b []byte, s string) ([]byte, error) {
	if out, ok := decodeBase32Hex(b, s); ok {
		return out, nil
	}
	up := e.scratch[:0]
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' {
			c -= 'a' - 'A'
		}
		up = append(up, c)
	}
	e.scratch = up
	return base32Hex.AppendDecode(b, up)
}

// appendStrings writes TXT's character-strings. An empty list writes
// nothing, as miekg/dns does.
func appendStrings(b []byte, ss []string) ([]byte, error) {
	var err error
	for _, s := range ss {
		if b, err = appendString(b, s); err != nil {
			return b, err
		}
	}
	return b, nil
}

// appendString writes one character-string, reading the escapes \X and
// \DDD.
func appendString(b []byte, s string) ([]byte, error) {
	if len(s) > 256*4+1 {
		return b, errString
	}
	at := len(b)
	b = append(b, 0)
	b = appendUnescaped(b, s)
	l := len(b) - at - 1
	if l > 255 {
		return b, errString
	}
	b[at] = byte(l)
	return b, nil
}

// appendOctets writes a string to the end of the RDATA, with no length.
func appendOctets(b []byte, s string) ([]byte, error) {
	if len(s) > 256*4+1 {
		return b, errString
	}
	return appendUnescaped(b, s), nil
}

// appendUnescaped appends s with its escapes \X and \DDD read. The text
// between escapes, usually all of it, is copied whole.
func appendUnescaped(b []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, '\\')
		if i < 0 {
			return append(b, s...)
		}
		b = append(b, s[:i]...)
		s = s[i+1:]
		switch {
		case s == "":
			return b // a lone backslash at the end: nothing, as miekg/dns
		case isDDD(s):
			b = append(b, dddToByte(s))
			s = s[3:]
		default:
			b = append(b, s[0])
			s = s[1:]
		}
	}
}

// appendBitmap writes an NSEC or NSEC3 type bitmap: window, length, bits,
// the types in ascending order.
func appendBitmap(b []byte, types []uint16) ([]byte, error) {
	if len(types) == 0 {
		return b, nil
	}
	off := len(b)
	var lastWindow, lastLength uint16
	for _, t := range types {
		window := t / 256
		length := (t-window*256)/8 + 1
		if window > lastWindow && lastLength != 0 {
			off += int(lastLength) + 2
			lastLength = 0
		}
		if window < lastWindow || length < lastLength {
			return b, errBitmap
		}
		if need := off + 2 + int(length); len(b) < need {
			b = append(b, make([]byte, need-len(b))...) // zeroed, not allocated
		}
		b[off] = byte(window)
		b[off+1] = byte(length)
		b[off+1+int(length)] |= byte(1 << (7 - t%8))
		lastWindow, lastLength = window, length
	}
	return b[:off+int(lastLength)+2], nil
}

// svcb writes SVCB and HTTPS records whose parameters are the common ones
// (RFC 9460's keys 0 to 6) in ascending order, as zone files hold them;
// any other is left to miekg/dns, which sorts a copy first.
func (e *Encoder) svcb(rr *dns.SVCB) (bool, error) {
	prev := -1
	for _, kv := range rr.Value {
		k := int(kv.Key())
		if k <= prev || k > int(dns.SVCB_IPV6HINT) {
			return false, nil
		}
		if m, ok := kv.(*dns.SVCBMandatory); ok && !slices.IsSorted(m.Code) {
			return false, nil
		}
		prev = k
	}
	e.buf = binary.BigEndian.AppendUint16(e.buf, rr.Priority)
	if err := e.name(rr.Target, false); err != nil {
		return true, err
	}
	b := e.buf
	for _, kv := range rr.Value {
		b = binary.BigEndian.AppendUint16(b, uint16(kv.Key()))
		at := len(b)
		b = append(b, 0, 0)
		switch kv := kv.(type) {
		case *dns.SVCBMandatory:
			for _, c := range kv.Code {
				b = binary.BigEndian.AppendUint16(b, uint16(c))
			}
		case *dns.SVCBAlpn:
			for _, a := range kv.Alpn {
				if a == "" || len(a) > 255 {
					return true, errString
				}
				b = append(append(b, byte(len(a))), a...)
			}
		case *dns.SVCBNoDefaultAlpn:
		case *dns.SVCBPort:
			b = binary.BigEndian.AppendUint16(b, kv.Port)
		case *dns.SVCBIPv4Hint:
			for _, ip := range kv.Hint {
				x := ip.To4()
				if x == nil {
					return true, errA
				}
				b = append(b, x...)
			}
		case *dns.SVCBECHConfig:
			b = append(b, kv.ECH...)
		case *dns.SVCBIPv6Hint:
			for _, ip := range kv.Hint {
				if len(ip) != 16 || ip.To4() != nil {
					return true, errAAAA
				}
				b = append(b, ip...)
			}
		default:
			return true, errSVCB // a key in range has a type of its own
		}
		binary.BigEndian.PutUint16(b[at:], uint16(len(b)-at-2))
	}
	e.buf = b
	return true, nil
}
