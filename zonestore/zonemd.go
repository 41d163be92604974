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
		case md.Hash != ZONEMDSHA384 && md.Hash != ZONEMDSHA512:
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
		why = append(why, fmt.Sprintf("the %s digest is %X, not the record's", hashName(md.Hash), d))
	}
	return fmt.Errorf("%w: zone %q serial %d does not verify: %s", ErrZONEMD, z.origin, z.serial, strings.Join(why, "; "))
}

func hashName(h uint8) string {
	if h == ZONEMDSHA512 {
		return "SHA-512"
	}
	return "SHA-384"
}

// Digest returns the zone's SIMPLE digest (RFC 8976 section 3) under hash
// algorithm h (ZONEMDSHA384 or ZONEMDSHA512): the hash of every record of
// the zone but the apex's ZONEMD records and their signatures, glue and
// data below cuts included, each in the canonical form of RFC 4034
// section 6.2, in canonical order (section 6.3: by owner, then type, then
// RDATA). It reads and sorts every record: for whoever publishes a
// version, never for a query.
func (z *Zone) Digest(h uint8) []byte {
	var sum hash.Hash
	if h == ZONEMDSHA512 {
		sum = sha512.New()
	} else {
		sum = sha512.New384()
	}
	type entry struct {
		owner []byte // canonical order key of the owner
		typ   uint16
		wire  []byte // the record in canonical form
		rdata int    // where its RDATA starts in wire
	}
	var entries []entry
	var buf []byte
	z.Walk(func(rrs []dns.RR) bool {
		for _, rr := range rrs {
			h := rr.Header()
			if h.Rrtype == dns.TypeZONEMD && strings.EqualFold(h.Name, z.origin) {
				continue
			}
			if sig, ok := rr.(*dns.RRSIG); ok && sig.TypeCovered == dns.TypeZONEMD && strings.EqualFold(h.Name, z.origin) {
				continue
			}
			c := canonical(rr)
			k, err := key(c.Header().Name)
			if err != nil {
				continue // not reached: the zone holds only names key reads
			}
			if cap(buf) < dns.Len(c)+1 {
				buf = make([]byte, max(dns.Len(c)+1, 4096))
			}
			n, err := dns.PackRR(c, buf, 0, nil, false)
			if err != nil {
				continue // not reached: every record held was packed to be read
			}
			_, start, _ := dns.UnpackDomainName(buf[:n], 0)
			entries = append(entries, entry{appendSortKey(nil, k), h.Rrtype, bytes.Clone(buf[:n]), start + 10})
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

// canonical returns a copy of rr in the canonical form of RFC 4034
// section 6.2: its owner in lowercase, and so the names in its RDATA for
// the types that section lists, less those RFC 6840 section 5.1 takes out
// of it, as miekg/dns signs them (NSEC's and RRSIG's names keep their case).
func canonical(rr dns.RR) dns.RR {
	c := dns.Copy(rr)
	h := c.Header()
	h.Name = dns.CanonicalName(h.Name)
	switch x := c.(type) {
	case *dns.NS:
		x.Ns = dns.CanonicalName(x.Ns)
	case *dns.MD:
		x.Md = dns.CanonicalName(x.Md)
	case *dns.MF:
		x.Mf = dns.CanonicalName(x.Mf)
	case *dns.CNAME:
		x.Target = dns.CanonicalName(x.Target)
	case *dns.SOA:
		x.Ns, x.Mbox = dns.CanonicalName(x.Ns), dns.CanonicalName(x.Mbox)
	case *dns.MB:
		x.Mb = dns.CanonicalName(x.Mb)
	case *dns.MG:
		x.Mg = dns.CanonicalName(x.Mg)
	case *dns.MR:
		x.Mr = dns.CanonicalName(x.Mr)
	case *dns.PTR:
		x.Ptr = dns.CanonicalName(x.Ptr)
	case *dns.MINFO:
		x.Rmail, x.Email = dns.CanonicalName(x.Rmail), dns.CanonicalName(x.Email)
	case *dns.MX:
		x.Mx = dns.CanonicalName(x.Mx)
	case *dns.RP:
		x.Mbox, x.Txt = dns.CanonicalName(x.Mbox), dns.CanonicalName(x.Txt)
	case *dns.AFSDB:
		x.Hostname = dns.CanonicalName(x.Hostname)
	case *dns.RT:
		x.Host = dns.CanonicalName(x.Host)
	case *dns.SIG:
		x.SignerName = dns.CanonicalName(x.SignerName)
	case *dns.PX:
		x.Map822, x.Mapx400 = dns.CanonicalName(x.Map822), dns.CanonicalName(x.Mapx400)
	case *dns.NAPTR:
		x.Replacement = dns.CanonicalName(x.Replacement)
	case *dns.KX:
		x.Exchanger = dns.CanonicalName(x.Exchanger)
	case *dns.SRV:
		x.Target = dns.CanonicalName(x.Target)
	case *dns.DNAME:
		x.Target = dns.CanonicalName(x.Target)
	}
	return c
}
