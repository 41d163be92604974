package zonestore

import (
	"bytes"
	"crypto/sha512"
	"encoding/hex"
	"errors"
	"fmt"
	"hash"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// A zone's digest (ZONEMD, RFC 8976) is a hash of its records, carried in
// the zone at its apex: a secondary, or a server loading a copied file,
// checks that it holds the zone its publisher digested, whatever way it
// came. With DNSSEC the ZONEMD record is signed, and the check is of the
// zone's origin too; without, it guards against changes by mistake only.
// Only the SIMPLE scheme is defined, over SHA-384 or SHA-512.

// ZONEMD schemes and hash algorithms (RFC 8976 sections 5.2 and 5.3).
const (
	ZONEMDSimple = 1
	ZONEMDSHA384 = 1
	ZONEMDSHA512 = 2
)

// zonemdHashes are the hash algorithms known here, by number.
var zonemdHashes = map[uint8]struct {
	name string
	new  func() hash.Hash
}{
	ZONEMDSHA384: {"SHA-384", sha512.New384},
	ZONEMDSHA512: {"SHA-512", sha512.New},
}

// ErrZONEMD is the error of every verification that fails; errors.Is finds
// it in what VerifyZONEMD returns.
var ErrZONEMD = errors.New("ZONEMD")

// VerifyZONEMD checks the zone's digest as RFC 8976 section 4 has a
// verifier check it: it succeeds where one ZONEMD record at the apex has
// the SOA's serial, the SIMPLE scheme, a hash algorithm known here and the
// digest of the zone. It fails, wrapping ErrZONEMD, where the apex has no
// ZONEMD record, where two have the same scheme and hash algorithm
// (section 2), and where none is verified so; the error says why of each.
func (z *Zone) VerifyZONEMD() error {
	var mds []*dns.ZONEMD
	if s := z.apex.get(dns.TypeZONEMD); s != nil {
		for _, rr := range s.rrs {
			mds = append(mds, rr.(*dns.ZONEMD))
		}
	}
	if len(mds) == 0 {
		return fmt.Errorf("%w: zone %q has no ZONEMD record at its apex", ErrZONEMD, z.origin)
	}
	for i, a := range mds {
		for _, b := range mds[:i] {
			if a.Scheme == b.Scheme && a.Hash == b.Hash {
				return fmt.Errorf("%w: zone %q has two ZONEMD records of scheme %d and hash algorithm %d", ErrZONEMD, z.origin, a.Scheme, a.Hash)
			}
		}
	}
	digests := map[uint8][]byte{} // by hash algorithm, each computed once
	var why []string
	for _, md := range mds {
		switch {
		case md.Serial != z.serial:
			why = append(why, fmt.Sprintf("serial %d is not the SOA's %d", md.Serial, z.serial))
			continue
		case md.Scheme != ZONEMDSimple:
			why = append(why, fmt.Sprintf("scheme %d is not SIMPLE", md.Scheme))
			continue
		case zonemdHashes[md.Hash].new == nil:
			why = append(why, fmt.Sprintf("hash algorithm %d is not SHA-384 or SHA-512", md.Hash))
			continue
		}
		d, ok := digests[md.Hash]
		if !ok {
			d = z.Digest(md.Hash)
			digests[md.Hash] = d
		}
		if strings.EqualFold(md.Digest, hex.EncodeToString(d)) {
			return nil
		}
		why = append(why, fmt.Sprintf("the %s digest is %X, not the record's", zonemdHashes[md.Hash].name, d))
	}
	return fmt.Errorf("%w: zone %q serial %d does not verify: %s", ErrZONEMD, z.origin, z.serial, strings.Join(why, "; "))
}

// WithZONEMD returns the version of z whose apex holds one ZONEMD record,
// in place of any it held: of z's serial, the SIMPLE scheme, hash
// algorithm h and z's digest (RFC 8976 section 3), at the SOA's TTL. It is
// an edit of z, which shares the rest. A signed zone is refused: its ZONEMD
// record must be signed too (section 3.5), and no key is here.
func (z *Zone) WithZONEMD(h uint8) (*Zone, error) {
	if z.signed {
		return nil, fmt.Errorf("%w: zone %q is signed: its digest must be signed with it, by its signer", ErrZONEMD, z.origin)
	}
	if zonemdHashes[h].new == nil {
		return nil, fmt.Errorf("%w: hash algorithm %d is not SHA-384 or SHA-512", ErrZONEMD, h)
	}
	d := z.Digest(h)
	b := z.Edit()
	if s := z.apex.get(dns.TypeZONEMD); s != nil {
		for _, rr := range s.rrs {
			b.Delete(rr)
		}
	}
	b.Add(&dns.ZONEMD{Hdr: dns.RR_Header{Name: z.origin, Rrtype: dns.TypeZONEMD, Class: dns.ClassINET, Ttl: z.soa.Hdr.Ttl},
		Serial: z.serial, Scheme: ZONEMDSimple, Hash: h, Digest: hex.EncodeToString(d)}, 0)
	return b.Build()
}

// Digest returns the zone's SIMPLE digest (RFC 8976 section 3) under hash
// algorithm h (ZONEMDSHA384 or ZONEMDSHA512; SHA-384 for any other): the
// hash of every record of the zone but the apex's ZONEMD records and their
// signatures, glue and data below cuts included, each in the canonical
// form of RFC 4034 section 6.2, in canonical order (section 6.3: by owner,
// then type, then RDATA). It reads and sorts every record: for whoever
// publishes a version, never for a query.
func (z *Zone) Digest(h uint8) []byte {
	alg, ok := zonemdHashes[h]
	if !ok {
		alg = zonemdHashes[ZONEMDSHA384]
	}
	sum := alg.new()
	type entry struct {
		owner []byte // canonical order key of the owner
		typ   uint16
		wire  []byte // the record in canonical form
		rdata int    // where its RDATA starts in wire
	}
	var entries []entry
	var arena []byte // the records' canonical octets, one after another
	// Walk hands over one name's records a call, the names in canonical
	// order but the NSEC3 records' (last): the sort below has little to
	// do. Over the names in the map's order it took 1.6 times as long.
	z.Walk(func(rrs []dns.RR) bool {
		var owner []byte // the name's order key, made for its first record
		var ownerLen int
		for _, rr := range rrs {
			h := rr.Header()
			if h.Rrtype == dns.TypeZONEMD && equalName(dns.Fqdn(h.Name), z.origin) {
				continue
			}
			if sig, ok := rr.(*dns.RRSIG); ok && sig.TypeCovered == dns.TypeZONEMD && equalName(dns.Fqdn(h.Name), z.origin) {
				continue
			}
			c := canonical(rr)
			if owner == nil {
				k, err := key(c.Header().Name)
				if err != nil {
					return true // not reached: the zone holds only names key reads
				}
				owner, ownerLen = appendSortKey(nil, k), len(k) // the key is the name in wire form
			}
			if need := dns.Len(c) + 1; cap(arena)-len(arena) < need {
				arena = make([]byte, 0, max(need, 1<<20)) // the records packed before keep the old one
			}
			at := len(arena)
			n, err := dns.PackRR(c, arena[at:cap(arena)], 0, nil, false)
			if err != nil {
				continue // not reached: every record held was packed to be read
			}
			arena = arena[:at+n]
			entries = append(entries, entry{owner, h.Rrtype, arena[at : at+n : at+n], ownerLen + 10})
		}
		return true
	})
	slices.SortFunc(entries, func(a, b entry) int {
		if c := bytes.Compare(a.owner, b.owner); c != 0 {
			return c
		}
		if a.typ != b.typ {
			return int(a.typ) - int(b.typ)
		}
		return bytes.Compare(a.wire[a.rdata:], b.wire[b.rdata:])
	})
	for i, e := range entries {
		if i > 0 && bytes.Equal(e.wire, entries[i-1].wire) {
			continue // one record of each (section 3.3.1.1); not reached, the zone holds none twice
		}
		sum.Write(e.wire)
	}
	return sum.Sum(nil)
}

// canonicalName is a presentation name in the lowercase of RFC 4034
// section 6.2: the letters A to Z only, written as themselves or escaped
// (\065, \A). dns.CanonicalName's strings.ToLower rewrites an octet that
// is no UTF-8 (a label's 0x89, written raw in a zone file) as U+FFFD, and
// leaves an escaped capital as it is: the digest then is of another name
// (FuzzParse found the first).
func canonicalName(s string) string {
	s = dns.Fqdn(s)
	if strings.IndexByte(s, '\\') < 0 && !hasUpper(s) {
		return s
	}
	out := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c == '\\' && i+3 < len(s) && isDigit(s[i+1]) && isDigit(s[i+2]) && isDigit(s[i+3]) {
			v := int(s[i+1]-'0')*100 + int(s[i+2]-'0')*10 + int(s[i+3]-'0')
			if 'A' <= v && v <= 'Z' {
				out = append(out, byte(v)+'a'-'A') // a letter needs no escape
			} else {
				out = append(out, s[i:i+4]...)
			}
			i += 3
			continue
		}
		if c == '\\' && i+1 < len(s) {
			out = append(out, '\\', lowerASCII(s[i+1]))
			i++
			continue
		}
		out = append(out, lowerASCII(c))
	}
	return string(out)
}

func hasUpper(s string) bool {
	for i := 0; i < len(s); i++ {
		if 'A' <= s[i] && s[i] <= 'Z' {
			return true
		}
	}
	return false
}

// canonical returns rr in the canonical form of RFC 4034 section 6.2: its
// owner in lowercase, and so the names in its RDATA for the types that
// section lists, less those RFC 6840 section 5.1 takes out of it, as
// miekg/dns signs them (NSEC's and RRSIG's names keep their case). rr
// itself where it is so already, as nearly every record is; a copy
// otherwise.
func canonical(rr dns.RR) dns.RR {
	plain := isLower(rr.Header().Name)
	canonicalNames(rr, func(s *string) { plain = plain && isLower(*s) })
	if plain {
		return rr
	}
	c := dns.Copy(rr)
	c.Header().Name = canonicalName(c.Header().Name)
	canonicalNames(c, func(s *string) { *s = canonicalName(*s) })
	return c
}

// isLower reports whether name is written in lowercase, with no escape
// that canonicalName would have to read.
func isLower(name string) bool {
	return !hasUpper(name) && strings.IndexByte(name, '\\') < 0
}

// canonicalNames calls f with each name in rr's RDATA that the canonical
// form lowercases.
func canonicalNames(rr dns.RR, f func(*string)) {
	switch x := rr.(type) {
	case *dns.NS:
		f(&x.Ns)
	case *dns.MD:
		f(&x.Md)
	case *dns.MF:
		f(&x.Mf)
	case *dns.CNAME:
		f(&x.Target)
	case *dns.SOA:
		f(&x.Ns)
		f(&x.Mbox)
	case *dns.MB:
		f(&x.Mb)
	case *dns.MG:
		f(&x.Mg)
	case *dns.MR:
		f(&x.Mr)
	case *dns.PTR:
		f(&x.Ptr)
	case *dns.MINFO:
		f(&x.Rmail)
		f(&x.Email)
	case *dns.MX:
		f(&x.Mx)
	case *dns.RP:
		f(&x.Mbox)
		f(&x.Txt)
	case *dns.AFSDB:
		f(&x.Hostname)
	case *dns.RT:
		f(&x.Host)
	case *dns.SIG:
		f(&x.SignerName)
	case *dns.PX:
		f(&x.Map822)
		f(&x.Mapx400)
	case *dns.NAPTR:
		f(&x.Replacement)
	case *dns.KX:
		f(&x.Exchanger)
	case *dns.SRV:
		f(&x.Target)
	case *dns.DNAME:
		f(&x.Target)
	}
}
