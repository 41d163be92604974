package zonestore

import (
	"sync/atomic"

	"github.com/miekg/dns"
)

// Zone is one immutable version of a zone. Everything a query asks of it was
// computed when it was built: a lookup reads, and never writes, any of it, so
// any number of goroutines may use a Zone at once without synchronisation.
type Zone struct {
	// First, in one cache line, what a lookup reads first, and warming
	// fetches (Store.Warm).
	idx   *index           // every owner name, empty non-terminals included, for a zone of indexMin names and more; nil for the rest (index.go)
	few   []fewSlot        // the same, for a zone of fewer than indexMin names (few.go)
	nodes map[string]*node // the same, by wire key; nil for a zone of fewer than indexMin names
	apex  *node

	origin     string // lowercase presentation, fully qualified
	originKey  string
	generation uint64 // set by the Store when published
	serial     uint32
	file       string // where it came from, for errors and reloads

	soa    *dns.SOA
	negSOA *dns.SOA // the SOA with TTL min(SOA TTL, MINIMUM), for negative answers (RFC 2308 section 5)
	negSet []dns.RR // negSOA and its signatures, with the same TTL, as Knot sends them

	// DNSSEC, when the zone is pre-signed.
	nsec  []*node      // nodes that own an NSEC, in canonical order
	nsec3 []*nsec3Node // NSEC3 records, by hashed owner
	// nsecPrefix is nsecPrefixOf each of nsec's sort keys, in its order;
	// nsecOrigin the origin's sort key, which starts every one of them.
	nsecPrefix []uint64
	nsecOrigin string
	// apexWildcard and apexWildcard3 cover the apex's wildcard in the
	// NSEC and NSEC3 chains (wildcardCover, wildcardCover3); nil where
	// the chain is empty.
	apexWildcard  *node
	apexWildcard3 *nsec3Node
	// nsec3Prefix is prefix8 of each of nsec3's hashes, in its order;
	// nsec3Buckets finds where a hash sorts among them (indexNSEC3).
	nsec3Prefix  []uint64
	nsec3Buckets hashBuckets
	n3p          *dns.NSEC3PARAM
	n3salt       *[]byte // n3p's salt in octets; nil where it is no hex
	signed       bool

	records int // RRs held, for metrics and tests

	expired bool   // a secondary zone past its SOA expire: answered with SERVFAIL
	lease   *Lease // a secondary zone's: when it expires without a refresh (lease.go); nil for the rest
	// ttlsDiffer: some RRset of this version, or of one it was edited
	// from, came with records of differing TTLs (Builder.retime). The TTL
	// it was given depends on the file's order, which an edit does not
	// see: Reparse builds such a zone whole.
	ttlsDiffer bool

	retimed *Retimed // RRsets given one TTL as this version was built (Builder.retime); nil if none

	// text holds a large file's records as text, for the next Reparse;
	// nil otherwise. It empties once a later version replaces this one
	// (DropText), from whichever goroutine publishes that version.
	text *atomic.Pointer[masterText]
}

// node is one owner name of a zone. Nodes refer to other nodes by key, never
// by pointer, so that a new version shares every node its edit did not touch
// (see Zone.Edit): a pointer would pin the old version of its target.
type node struct {
	name    string // owner as written in the zone file (original case)
	key     string // wire key
	sortKey string // canonical order key, only for nodes in the NSEC chain (a string: node fits 128 bytes)
	rrsets  []rrset
	allSigs *rrset // every RRSIG at this name, as one RRset of type RRSIG (for ANY); nil if none

	// cut is the key of the topmost node at or above this one (the apex
	// excluded) where authority ends: a delegation (NS) or a DNAME. Names
	// below it are answered by referral or substitution; "" if none.
	cut string

	children    int32 // immediate child names, for removing empty non-terminals
	ent         bool  // an empty non-terminal: exists only because names below it do
	delegation  bool  // owns NS and is not the apex
	dname       bool
	alias       bool // owns an ALIAS record
	belowCut    bool // glue or occluded data: not authoritative
	hasWildcard bool // the zone holds "*." + this name

	nsec3Hash string // this name's NSEC3 hash, when the zone has an NSEC3 chain
}

// cutAbove returns the key of the topmost cut strictly above n, or "".
func (n *node) cutAbove() string {
	if n.cut == n.key {
		return ""
	}
	return n.cut
}

// rrset is the records of one type at one name, with the signatures that cover them.
type rrset struct {
	typ  uint16
	rrs  []dns.RR
	sigs []dns.RR
}

// nsec3Node is one NSEC3 record and its signatures, kept apart from the names
// it hashes so that hashed owners never answer ordinary lookups.
type nsec3Node struct {
	hash string // the base32hex hash label, uppercase, as it sorts
	rr   *dns.NSEC3
	sigs []dns.RR
}

// Origin returns the zone's origin, lowercase and fully qualified.
func (z *Zone) Origin() string { return z.origin }

// Signed reports whether the zone is pre-signed (holds DNSKEY and signatures).
func (z *Zone) Signed() bool { return z.signed }

// Expired reports whether this version of a secondary zone went past its
// SOA expire timer without a refresh from a primary (RFC 1034 section
// 4.3.5): its data may be wrong, and it is answered with SERVFAIL.
func (z *Zone) Expired() bool { return z.expired }

// WithExpired returns a copy of z, marked expired or not, to publish over
// it: the data stay shared, and the copy is a new generation.
func (z *Zone) WithExpired(expired bool) *Zone {
	c := *z
	c.expired, c.generation = expired, 0
	return &c
}

// SOA returns the zone's SOA record (the zone's own: do not modify it).
func (z *Zone) SOA() *dns.SOA { return z.soa }

// Serial returns the SOA serial of this version.
func (z *Zone) Serial() uint32 { return z.serial }

// Generation returns the generation the Store published this version under; 0 before it was published.
func (z *Zone) Generation() uint64 { return z.generation }

// File returns the file the zone was read from, if any.
func (z *Zone) File() string { return z.file }

// Records returns how many resource records the zone holds.
func (z *Zone) Records() int { return z.records }

// Retimed returns the RRsets whose records came with differing TTLs as
// this version was built, each given its last record's; nil if none.
func (z *Zone) Retimed() *Retimed { return z.retimed }

// HasApexNS reports whether the zone has NS records at its apex. RFC 1034
// section 4.2.1 wants them; Knot DNS serves a zone without them, with a
// warning.
func (z *Zone) HasApexNS() bool {
	n := z.node(z.originKey)
	return n != nil && n.get(dns.TypeNS) != nil
}

// Names returns how many owner names the zone holds, empty non-terminals included.
func (z *Zone) Names() int { return len(z.nodes) + len(z.few) }

func (n *node) get(t uint16) *rrset {
	for i := range n.rrsets {
		if n.rrsets[i].typ == t {
			return &n.rrsets[i]
		}
	}
	return nil
}

// hasData reports whether the node owns records other than signatures and the NSEC chain.
func (n *node) hasData() bool {
	for i := range n.rrsets {
		if t := n.rrsets[i].typ; t != dns.TypeNSEC && t != dns.TypeRRSIG {
			return true
		}
	}
	return false
}

// DropText lets go of the file's text this version kept for its next
// re-read, once a later version has replaced it: only the version served
// is re-read, and older ones held for IXFR would otherwise each keep their
// file's text (21 MB for a 170,000-name zone). A version that has dropped
// it is re-read by parsing every record.
func (z *Zone) DropText() {
	if z.text != nil {
		z.text.Store(nil)
	}
}

// HoldsText reports whether this version keeps its file's text for the
// next re-read.
func (z *Zone) HoldsText() bool { return z.keptText() != nil }

// keptText returns the text kept for the next re-read, or nil.
func (z *Zone) keptText() *masterText {
	if z.text == nil {
		return nil
	}
	return z.text.Load()
}

// setText keeps t for the next re-read; called before z is published.
func (z *Zone) setText(t *masterText) {
	if t != nil {
		z.text = new(atomic.Pointer[masterText])
		z.text.Store(t)
	}
}
