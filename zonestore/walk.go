package zonestore

import (
	"bytes"
	"io"
	"slices"

	"github.com/miekg/dns"
)

// Walk calls f with the records of each name of this version, as a zone
// transfer sends them (RFC 5936 section 2.2): the apex first with its SOA
// first, then every other name in canonical order (RFC 4034 section 6.1),
// then the NSEC3 records; each name's records with their signatures. It
// stops when f returns false. The version never changes, so a transfer
// that walks it sends one version whole, whatever is published meanwhile.
// The records are the zone's own: f must not modify them, and the slice
// is f's only until it returns.
func (z *Zone) Walk(f func([]dns.RR) bool) {
	apex := []dns.RR{z.soa}
	apex = append(apex, z.apex.get(dns.TypeSOA).sigs...)
	apex = appendNode(apex, z.apex, dns.TypeSOA)
	if !f(apex) {
		return
	}
	type named struct {
		sort []byte
		n    *node
	}
	names := make([]named, 0, z.Names())
	for k, n := range z.allNodes() {
		if n != z.apex && len(n.rrsets) > 0 {
			names = append(names, named{appendSortKey(nil, k), n})
		}
	}
	slices.SortFunc(names, func(a, b named) int { return bytes.Compare(a.sort, b.sort) })
	var rrs []dns.RR
	for _, x := range names {
		rrs = appendNode(rrs[:0], x.n, 0)
		if !f(rrs) {
			return
		}
	}
	for _, n3 := range z.nsec3 {
		if !f(append(append(rrs[:0], n3.rr), n3.sigs...)) {
			return
		}
	}
}

// WriteText writes the version's records to w as a zone file's text, one
// a line in Walk's order, and returns how many it wrote: what a secondary
// saves as its copy, and what FuzzParse reads again.
func (z *Zone) WriteText(w io.StringWriter) (int, error) {
	n := 0
	var err error
	z.Walk(func(rrs []dns.RR) bool {
		for _, rr := range rrs {
			if _, err = w.WriteString(rr.String()); err == nil {
				_, err = w.WriteString("\n")
			}
			if err != nil {
				return false
			}
			n++
		}
		return true
	})
	return n, err
}

// appendNode appends n's records and signatures, but those of type skip.
func appendNode(dst []dns.RR, n *node, skip uint16) []dns.RR {
	for _, s := range n.rrsets {
		if s.typ != skip {
			dst = append(append(dst, s.rrs...), s.sigs...)
		}
	}
	return dst
}
