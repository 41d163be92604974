package zonestore

import (
	"slices"

	"github.com/miekg/dns"
)

// Diff returns what changed from old to new, two versions of one zone, as
// an IXFR difference carries it (RFC 1995): the records old holds and new
// does not, and the other way round, SOA left out. Versions built with
// Edit share the nodes an edit did not touch, so those are skipped by
// pointer: a change to one name of a 170,000-name zone compares that name.
func Diff(old, new *Zone) (deleted, added []dns.RR) {
	for k, n := range new.allNodes() {
		o := old.named(k)
		if o == n {
			continue
		}
		d, a := diffRRs(nodeRecords(o), nodeRecords(n))
		deleted, added = append(deleted, d...), append(added, a...)
	}
	for k, o := range old.allNodes() {
		if new.named(k) == nil {
			deleted = append(deleted, nodeRecords(o)...)
		}
	}
	if slices.Equal(old.nsec3, new.nsec3) {
		return deleted, added // the same NSEC3 records, shared
	}
	var o3, n3 []dns.RR
	for _, x := range old.nsec3 {
		o3 = append(append(o3, x.rr), x.sigs...)
	}
	for _, x := range new.nsec3 {
		n3 = append(append(n3, x.rr), x.sigs...)
	}
	d, a := diffRRs(o3, n3)
	return append(deleted, d...), append(added, a...)
}

// nodeRecords returns n's records and signatures but its SOA, which an
// IXFR difference carries as its delimiters (RFC 1995). The SOA's
// signatures are records of the difference like any other: a secondary
// that applies it drops the old serial's and takes the new serial's, or
// it would serve the new SOA under a signature of the old one.
// (TestRandomIXFRAsKnot found them left out: a Knot following a signed
// zone by IXFR kept the first serial's.)
func nodeRecords(n *node) []dns.RR {
	if n == nil {
		return nil
	}
	var rrs []dns.RR
	for _, s := range n.rrsets {
		if s.typ != dns.TypeSOA {
			rrs = append(rrs, s.rrs...)
		}
		rrs = append(rrs, s.sigs...)
	}
	return rrs
}

// diffRRs returns the records only in a, and those only in b.
func diffRRs(a, b []dns.RR) (onlyA, onlyB []dns.RR) {
	inA := make(map[string]int, len(a))
	for _, rr := range a {
		inA[rr.String()]++
	}
	for _, rr := range b {
		s := rr.String()
		if inA[s] > 0 {
			inA[s]--
			continue
		}
		onlyB = append(onlyB, rr)
	}
	for _, rr := range a {
		s := rr.String()
		if inA[s] > 0 {
			inA[s]--
			onlyA = append(onlyA, rr)
		}
	}
	return onlyA, onlyB
}
