package zonestore

import (
	"bytes"
	"fmt"
	"sort"
	"strings"

	"github.com/miekg/dns"
)

// Builder collects the records of one zone and builds an immutable Zone from
// them. A Builder is used by one goroutine; the Zone it builds by any number.
type Builder struct {
	origin    string
	originKey string
	file      string
	nodes     map[string]*node
	pending   []pendingSig // RRSIGs, attached to the RRsets they cover once all are read
	nsec3     []*nsec3Node
	records   int
	err       error
}

type pendingSig struct {
	sig  *dns.RRSIG
	line int
}

// Error is a zone that cannot be published: which zone, which file and line, and why.
type Error struct {
	Origin string
	File   string
	Line   int // 0 when the problem is not one line's (a missing SOA, say)
	Reason string
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "zone %q", e.Origin)
	if e.File != "" {
		fmt.Fprintf(&b, " file %q", e.File)
	}
	if e.Line > 0 {
		fmt.Fprintf(&b, " line %d", e.Line)
	}
	b.WriteString(": ")
	b.WriteString(e.Reason)
	return b.String()
}

// NewBuilder starts a zone for origin; file is only used in error messages and reported by Zone.File.
func NewBuilder(origin, file string) (*Builder, error) {
	origin = dns.CanonicalName(origin)
	k, err := key(origin)
	if err != nil {
		return nil, &Error{Origin: origin, File: file, Reason: err.Error()}
	}
	return &Builder{origin: origin, originKey: k, file: file, nodes: map[string]*node{}}, nil
}

func (b *Builder) errorf(line int, format string, args ...any) error {
	return &Error{Origin: b.origin, File: b.file, Line: line, Reason: fmt.Sprintf(format, args...)}
}

// Add adds one record. line is where it was read, 0 if unknown. A record
// outside the zone or that does not pack is an error; the Builder keeps the
// first error and Build returns it.
func (b *Builder) Add(rr dns.RR, line int) error {
	if b.err != nil {
		return b.err
	}
	err := b.add(rr, line)
	if err != nil {
		b.err = err
	}
	return err
}

func (b *Builder) add(rr dns.RR, line int) error {
	h := rr.Header()
	k, err := key(h.Name)
	if err != nil {
		return b.errorf(line, "%v", err)
	}
	if !subdomainKey(k, b.originKey) {
		return b.errorf(line, "out-of-zone record %q %s", h.Name, dns.TypeToString[h.Rrtype])
	}
	b.records++
	switch r := rr.(type) {
	case *dns.RRSIG:
		b.pending = append(b.pending, pendingSig{r, line})
		return nil
	case *dns.NSEC3:
		b.nsec3 = append(b.nsec3, &nsec3Node{hash: strings.ToUpper(firstLabelPresentation(h.Name)), rr: r})
		return nil
	}
	n := b.nodes[k]
	if n == nil {
		n = &node{name: h.Name, key: k}
		b.nodes[k] = n
	}
	for i := range n.rrsets {
		s := &n.rrsets[i]
		if s.typ != h.Rrtype {
			continue
		}
		for _, have := range s.rrs {
			if dns.IsDuplicate(have, rr) {
				b.records--
				return nil
			}
		}
		s.rrs = append(s.rrs, rr)
		return nil
	}
	n.rrsets = append(n.rrsets, rrset{typ: h.Rrtype, rrs: []dns.RR{rr}})
	return nil
}

func firstLabelPresentation(name string) string {
	for i := 0; i < len(name); i++ {
		switch name[i] {
		case '\\':
			i++
		case '.':
			return name[:i]
		}
	}
	return name
}

// Build validates the zone and computes everything queries will ask of it:
// empty non-terminals, wildcard owners, zone cuts, the NSEC chain's order and
// each name's NSEC3. A zone that fails validation is not returned.
func (b *Builder) Build() (*Zone, error) {
	if b.err != nil {
		return nil, b.err
	}
	z := &Zone{origin: b.origin, originKey: b.originKey, file: b.file, nodes: b.nodes, records: b.records}

	z.apex = b.nodes[b.originKey]
	if z.apex == nil || z.apex.get(dns.TypeSOA) == nil {
		return nil, b.errorf(0, "no SOA record at the apex")
	}
	soas := z.apex.get(dns.TypeSOA).rrs
	if len(soas) != 1 {
		return nil, b.errorf(0, "%d SOA records at the apex, want 1", len(soas))
	}
	z.soa = soas[0].(*dns.SOA)
	z.serial = z.soa.Serial
	neg := dns.Copy(z.soa).(*dns.SOA)
	neg.Hdr.Ttl = min(neg.Hdr.Ttl, neg.Minttl)
	z.negSOA = neg

	// Empty non-terminals: every ancestor of a name, up to the apex, exists.
	// Each node is linked to its parent once; a missing parent is created as
	// an empty non-terminal and linked in turn.
	work := make([]string, 0, len(b.nodes))
	for k := range b.nodes {
		work = append(work, k)
	}
	for len(work) > 0 {
		k := work[len(work)-1]
		work = work[:len(work)-1]
		n := b.nodes[k]
		if n == z.apex || n.parent != nil {
			continue
		}
		pk := parentKey(k)
		p := b.nodes[pk]
		if p == nil {
			p = &node{name: presentation(pk), key: pk, ent: true}
			b.nodes[pk] = p
			work = append(work, pk)
		}
		n.parent = p
	}

	// Nodes by depth, so that a parent's cut is known before its children's.
	all := make([]*node, 0, len(b.nodes))
	for _, n := range b.nodes {
		all = append(all, n)
	}
	sort.Slice(all, func(i, j int) bool { return len(all[i].key) < len(all[j].key) })

	if err := b.attachSigs(z); err != nil {
		return nil, err
	}

	for _, n := range all {
		sort.Slice(n.rrsets, func(i, j int) bool { return n.rrsets[i].typ < n.rrsets[j].typ })
		if err := b.checkNode(z, n); err != nil {
			return nil, err
		}
		n.delegation = n != z.apex && n.get(dns.TypeNS) != nil
		n.dname = n.get(dns.TypeDNAME) != nil
		if n.parent != nil {
			n.belowCut = n.parent.cut != nil
			n.cut = n.parent.cut
		}
		if n.cut == nil && (n.delegation || (n.dname && n != z.apex)) {
			n.cut = n
		}
		if isWildcardKey(n.key) && n.parent != nil {
			n.parent.wildcard = n
		}
	}
	for _, sig := range z.apex.get(dns.TypeSOA).sigs {
		c := dns.Copy(sig)
		c.Header().Ttl = neg.Hdr.Ttl
		z.negSOASigs = append(z.negSOASigs, c)
	}
	for _, n := range all {
		for _, s := range n.rrsets {
			if len(s.sigs) > 0 {
				n.allSigs.typ = dns.TypeRRSIG
				n.allSigs.rrs = append(n.allSigs.rrs, s.sigs...)
			}
		}
	}
	if err := b.checkGlue(z, all); err != nil {
		return nil, err
	}
	if err := b.buildDNSSEC(z, all); err != nil {
		return nil, err
	}
	return z, nil
}

// attachSigs puts every RRSIG beside the RRset it covers, or the NSEC3 it covers.
func (b *Builder) attachSigs(z *Zone) error {
	var n3 map[string]*nsec3Node
	for _, p := range b.pending {
		k, _ := key(p.sig.Hdr.Name)
		if p.sig.TypeCovered == dns.TypeNSEC3 {
			if n3 == nil {
				n3 = make(map[string]*nsec3Node, len(b.nsec3))
				for _, n := range b.nsec3 {
					n3[n.hash] = n
				}
			}
			if n := n3[strings.ToUpper(firstLabelPresentation(p.sig.Hdr.Name))]; n != nil {
				n.sigs = append(n.sigs, p.sig)
				continue
			}
			return b.errorf(p.line, "RRSIG for NSEC3 at %q without the NSEC3 it covers", p.sig.Hdr.Name)
		}
		n := z.nodes[k]
		var s *rrset
		if n != nil {
			s = n.get(p.sig.TypeCovered)
		}
		if s == nil {
			return b.errorf(p.line, "RRSIG at %q covers %s, which that name does not have", p.sig.Hdr.Name, dns.TypeToString[p.sig.TypeCovered])
		}
		s.sigs = append(s.sigs, p.sig)
	}
	return nil
}

// checkNode refuses data no server may serve: a CNAME beside other data
// (RFC 1034 section 3.6.2, RFC 2181 section 10.1), more than one CNAME or DNAME.
func (b *Builder) checkNode(z *Zone, n *node) error {
	cname := n.get(dns.TypeCNAME)
	if cname != nil {
		if len(cname.rrs) > 1 {
			return b.errorf(0, "%q has %d CNAME records, want 1", n.name, len(cname.rrs))
		}
		for _, s := range n.rrsets {
			switch s.typ {
			case dns.TypeCNAME, dns.TypeRRSIG, dns.TypeNSEC, dns.TypeKEY:
			default:
				return b.errorf(0, "%q has a CNAME beside %s data", n.name, dns.TypeToString[s.typ])
			}
		}
		if n == z.apex {
			return b.errorf(0, "CNAME at the zone apex %q", n.name)
		}
	}
	if d := n.get(dns.TypeDNAME); d != nil && len(d.rrs) > 1 {
		return b.errorf(0, "%q has %d DNAME records, want 1", n.name, len(d.rrs))
	}
	return nil
}

// checkGlue refuses a delegation whose in-bailiwick name servers have no
// address in the zone: without that glue the child cannot be reached
// (RFC 9471 requires it to be sent). The apex NS targets inside the zone must
// have addresses too, unless they sit under another cut.
func (b *Builder) checkGlue(z *Zone, all []*node) error {
	for _, n := range all {
		if n != z.apex && !n.delegation {
			continue
		}
		if n.belowCut {
			continue
		}
		for _, rr := range n.get(dns.TypeNS).rrs {
			target := rr.(*dns.NS).Ns
			tk, err := key(target)
			if err != nil {
				return b.errorf(0, "NS target %q: %v", target, err)
			}
			if !subdomainKey(tk, z.originKey) {
				continue
			}
			if n == z.apex {
				if t := z.nodes[tk]; t != nil && t.belowCut {
					continue
				}
			} else if !subdomainKey(tk, n.key) {
				continue // sibling glue is optional
			}
			t := z.nodes[tk]
			if t == nil || (t.get(dns.TypeA) == nil && t.get(dns.TypeAAAA) == nil) {
				return b.errorf(0, "glue missing: NS %q of %q has no A or AAAA record in the zone", target, n.name)
			}
		}
	}
	return nil
}

// buildDNSSEC orders the NSEC chain and hashes every authoritative name to its NSEC3.
func (b *Builder) buildDNSSEC(z *Zone, all []*node) error {
	z.signed = z.apex.get(dns.TypeDNSKEY) != nil && len(z.apex.get(dns.TypeSOA).sigs) > 0
	for _, n := range all {
		if n.get(dns.TypeNSEC) != nil {
			n.sortKey = appendSortKey(nil, n.key)
			z.nsec = append(z.nsec, n)
		}
	}
	sort.Slice(z.nsec, func(i, j int) bool { return bytes.Compare(z.nsec[i].sortKey, z.nsec[j].sortKey) < 0 })

	if len(b.nsec3) == 0 {
		return nil
	}
	sort.Slice(b.nsec3, func(i, j int) bool { return b.nsec3[i].hash < b.nsec3[j].hash })
	z.nsec3 = b.nsec3
	if p := z.apex.get(dns.TypeNSEC3PARAM); p != nil {
		z.n3p = p.rrs[0].(*dns.NSEC3PARAM)
	} else {
		r := b.nsec3[0].rr
		z.n3p = &dns.NSEC3PARAM{Hash: r.Hash, Iterations: r.Iterations, SaltLength: r.SaltLength, Salt: r.Salt}
	}
	for _, n := range all {
		if n.belowCut {
			continue
		}
		n.nsec3 = z.findNSEC3(z.hash(n.key))
	}
	if z.apex.nsec3 == nil {
		return b.errorf(0, "NSEC3 chain has no record for the apex (NSEC3PARAM %s)", z.n3p.String())
	}
	return nil
}
