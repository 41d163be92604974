// Package record adds the ALIAS resource record type to miekg/dns, with
// PowerDNS's type code, so that zone files holding ALIAS records parse and
// zone transfers carry them. Importing the package registers the type.
package record

import (
	"fmt"
	"strings"

	"github.com/miekg/dns"
)

// TypeALIAS is PowerDNS's code for ALIAS, from the private-use range of
// RFC 6895 section 3.1.
const TypeALIAS uint16 = 65401

func init() {
	dns.PrivateHandle("ALIAS", TypeALIAS, func() dns.PrivateRdata { return new(ALIAS) })
}

// ALIAS is the RDATA of an ALIAS record: the name whose addresses answer,
// at query time, the A and AAAA questions for the record's owner. It is
// written `owner TTL IN ALIAS target.` and travels on the wire as the
// target's uncompressed name, as PowerDNS sends it.
type ALIAS struct {
	Target string // fully qualified
}

// Target returns the target of rr, an ALIAS record, or "" if rr is not one.
func Target(rr dns.RR) string {
	if p, ok := rr.(*dns.PrivateRR); ok && p.Hdr.Rrtype == TypeALIAS {
		if a, ok := p.Data.(*ALIAS); ok {
			return a.Target
		}
	}
	return ""
}

// Complete makes a relative target of rr, an ALIAS record, absolute
// under origin ("@" is the origin itself), as RFC 1035 section 5.1 does
// for the names of a master file.
func Complete(rr dns.RR, origin string) {
	p, ok := rr.(*dns.PrivateRR)
	if !ok {
		return
	}
	a, ok := p.Data.(*ALIAS)
	if !ok || dns.IsFqdn(a.Target) {
		return
	}
	if a.Target == "@" {
		a.Target = dns.Fqdn(origin)
		return
	}
	a.Target = dns.Fqdn(a.Target + "." + origin)
}

// New returns an ALIAS record.
func New(owner string, ttl uint32, target string) *dns.PrivateRR {
	rr := dns.TypeToRR[TypeALIAS]().(*dns.PrivateRR)
	rr.Hdr = dns.RR_Header{Name: owner, Rrtype: TypeALIAS, Class: dns.ClassINET, Ttl: ttl}
	rr.Data.(*ALIAS).Target = target
	return rr
}

func (a *ALIAS) String() string { return a.Target }

// Parse reads the target. miekg/dns hands a private type its tokens
// without the zone's origin, so a relative target stays relative here:
// Complete, given the origin, finishes it, as zonestore does at load.
func (a *ALIAS) Parse(txt []string) error {
	if len(txt) != 1 {
		return fmt.Errorf("ALIAS wants one target name, got %d fields %q", len(txt), strings.Join(txt, " "))
	}
	t := txt[0]
	if _, ok := dns.IsDomainName(t); !ok {
		return fmt.Errorf("ALIAS target %q is not a domain name", t)
	}
	a.Target = t
	return nil
}

func (a *ALIAS) Pack(buf []byte) (int, error) {
	return dns.PackDomainName(a.Target, buf, 0, nil, false)
}

func (a *ALIAS) Unpack(buf []byte) (int, error) {
	t, n, err := dns.UnpackDomainName(buf, 0)
	if err != nil {
		return len(buf), err
	}
	a.Target = t
	return n, nil
}

func (a *ALIAS) Copy(dst dns.PrivateRdata) error {
	d, ok := dst.(*ALIAS)
	if !ok {
		return fmt.Errorf("cannot copy ALIAS into %T", dst)
	}
	d.Target = a.Target
	return nil
}

func (a *ALIAS) Len() int {
	n, _ := dns.PackDomainName(a.Target, make([]byte, 256), 0, nil, false)
	return n
}
