package zonestore

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/yield"

	"github.com/ontimedns/ontime/alias/record"
)

// Builder makes one new version of a zone: from nothing (NewBuilder) or from
// the version before it (Zone.Edit), whose untouched nodes the new version
// shares. A Builder is used by one goroutine; the Zone it builds by any number.
//
// Edit is what makes a swap cheap: a version that changes a few names of a
// 170,000-name zone copies the name index and the touched nodes, not the
// zone (BenchmarkEdit170k against BenchmarkBuild170k).
type Builder struct {
	origin    string
	originKey string
	file      string
	base      *Zone // nil for a new zone

	nodes   map[string]*node
	owned   map[*node]bool // nodes this Builder may modify; true for names new in this version
	touched map[string]struct{}
	gone    []string // the keys of the names that left the zone

	pending      []pendingSig // RRSIGs, attached to what they cover once all are read
	nsec3        []*nsec3Node
	nsec3Owned   map[*nsec3Node]bool
	nsec3Changed bool
	records      int
	retimed      *Retimed
	err          error

	// pace yields the CPU to queries every few hundred microseconds of
	// building: a 170,000-name zone is built beside the queries it serves.
	pace yield.Pacer
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
	return &Builder{origin: origin, originKey: k, file: file, nodes: map[string]*node{},
		owned: map[*node]bool{}, touched: map[string]struct{}{}, nsec3Owned: map[*nsec3Node]bool{}}, nil
}

// Edit starts the next version of z. The zone z itself never changes.
func (z *Zone) Edit() *Builder {
	return &Builder{origin: z.origin, originKey: z.originKey, file: z.file, base: z,
		nodes: z.nodeMap(), owned: map[*node]bool{}, touched: map[string]struct{}{},
		nsec3: slices.Clone(z.nsec3), nsec3Owned: map[*nsec3Node]bool{}, records: z.records}
}

func (b *Builder) errorf(line int, format string, args ...any) error {
	return &Error{Origin: b.origin, File: b.file, Line: line, Reason: fmt.Sprintf(format, args...)}
}

// mutable returns the node for k that this Builder may change, cloning the
// base version's node on first use, or creating it when create is set.
func (b *Builder) mutable(k, name string, create bool) *node {
	n := b.nodes[k]
	if n == nil {
		if !create {
			return nil
		}
		n = &node{name: name, key: k}
		b.nodes[k] = n
		b.owned[n] = true
		return n
	}
	if _, ok := b.owned[n]; ok {
		return n
	}
	c := *n
	c.rrsets = make([]rrset, len(n.rrsets))
	for i, s := range n.rrsets {
		c.rrsets[i] = rrset{typ: s.typ, rrs: slices.Clone(s.rrs), sigs: slices.Clone(s.sigs)}
	}
	b.nodes[k] = &c
	b.owned[&c] = false
	return &c
}

// Add adds one record. line is where it was read, 0 if unknown. A record
// outside the zone or that does not pack is an error; the Builder keeps the
// first error and Build returns it.
func (b *Builder) Add(rr dns.RR, line int) error {
	b.pace.Tick()
	if b.err == nil {
		b.err = b.add(rr, line)
	}
	return b.err
}

// Delete removes one record, as an IXFR difference does; a record the zone
// does not hold is an error.
func (b *Builder) Delete(rr dns.RR) error {
	if b.err == nil {
		b.err = b.delete(rr)
	}
	return b.err
}

func (b *Builder) ownerKey(rr dns.RR, line int) (string, error) {
	h := rr.Header()
	// The key is made on the stack, and a name the version has already
	// (the owner of the record before, mostly) gives its own: a string
	// for each record was a tenth of a catalog member's allocations.
	var buf [maxName + 1]byte
	kb, err := appendKey(buf[:0], h.Name)
	if err != nil {
		return "", b.errorf(line, "%v", err)
	}
	if n := b.nodes[string(kb)]; n != nil {
		return n.key, nil // in the zone already
	}
	k := string(kb)
	if !subdomainKey(k, b.originKey) {
		return "", b.errorf(line, "out-of-zone record %q %s", h.Name, dns.TypeToString[h.Rrtype])
	}
	return k, nil
}

func (b *Builder) add(rr dns.RR, line int) error {
	h := rr.Header()
	k, err := b.ownerKey(rr, line)
	if err != nil {
		return err
	}
	b.records++
	switch r := rr.(type) {
	case *dns.RRSIG:
		b.pending = append(b.pending, pendingSig{r, line})
		return nil
	case *dns.NSEC3:
		b.nsec3 = append(b.nsec3, &nsec3Node{hash: strings.ToUpper(firstLabelPresentation(h.Name)), rr: r})
		b.nsec3Changed = true
		return nil
	}
	if h.Rrtype == record.TypeALIAS {
		record.Complete(rr, b.origin) // miekg/dns leaves a private type's names as written
	}
	n := b.mutable(k, h.Name, true)
	b.touched[k] = struct{}{}
	// One copy of the owner name for the node and all its records, and
	// IPv4 addresses in 4 bytes, not the parser's 16: memory per record.
	if h.Name == n.name {
		h.Name = n.name
	}
	if a, ok := rr.(*dns.A); ok {
		if v4 := a.A.To4(); v4 != nil {
			a.A = v4
		}
	}
	for i := range n.rrsets {
		s := &n.rrsets[i]
		if s.typ != h.Rrtype {
			continue
		}
		if len(s.rrs) > 0 && s.rrs[0].Header().Ttl != h.Ttl {
			b.retime(s, h.Ttl)
		}
		for _, have := range s.rrs {
			if duplicate(have, rr) {
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

// Retimed counts the RRsets a version was given whose records had
// differing TTLs, and names the first few.
type Retimed struct {
	Sets     int
	Examples []string // "owner TYPE"

	seen map[string]bool // every set counted, while building
}

// retime gives every record of s the TTL ttl, that of a record added to
// it with another: an RRset has one TTL (RFC 2181 section 5.2), and a
// resolver may take one with several for an error. The record read last
// sets it, as Knot DNS sets it, in a zone file and in an IXFR alike. The
// records are copied: the version edited from may hold them.
func (b *Builder) retime(s *rrset, ttl uint32) {
	for j, have := range s.rrs {
		c := dns.Copy(have)
		c.Header().Ttl = ttl
		s.rrs[j] = c
	}
	if b.retimed == nil {
		b.retimed = &Retimed{seen: map[string]bool{}}
	}
	set := s.rrs[0].Header().Name + " " + dns.TypeToString[s.typ]
	if !b.retimed.seen[set] {
		b.retimed.seen[set] = true
		b.retimed.Sets++
		if len(b.retimed.Examples) < 3 {
			b.retimed.Examples = append(b.retimed.Examples, set)
		}
	}
}

func (b *Builder) delete(rr dns.RR) error {
	k, err := b.ownerKey(rr, 0)
	if err != nil {
		return err
	}
	missing := b.errorf(0, "cannot delete %q, the zone does not hold it", rr.String())
	switch r := rr.(type) {
	case *dns.NSEC3:
		for i, n := range b.nsec3 {
			if n.rr != nil && dns.IsDuplicate(n.rr, r) {
				b.ownNSEC3(i).rr = nil // its signatures stay until Build: an IXFR deletes them after it (dropEmptied)
				b.records--
				return nil
			}
		}
		return missing
	case *dns.RRSIG:
		if r.TypeCovered == dns.TypeNSEC3 {
			return b.deleteNSEC3Sig(r, missing)
		}
	}
	n := b.mutable(k, "", false)
	if n == nil {
		return missing
	}
	typ := rr.Header().Rrtype
	if sig, ok := rr.(*dns.RRSIG); ok {
		typ = sig.TypeCovered
	}
	for i := range n.rrsets {
		s := &n.rrsets[i]
		if s.typ != typ {
			continue
		}
		list := &s.rrs
		if _, ok := rr.(*dns.RRSIG); ok {
			list = &s.sigs
		}
		for j, have := range *list {
			if duplicate(have, rr) {
				// An RRset left empty keeps its signatures until Build
				// (dropEmptied): an IXFR deletes a set's signatures
				// after the set, and the SOA's always (RFC 1995: the
				// old SOA opens each difference).
				*list = slices.Delete(*list, j, j+1)
				b.records--
				b.touched[k] = struct{}{}
				return nil
			}
		}
	}
	return missing
}

func (b *Builder) deleteNSEC3Sig(sig *dns.RRSIG, missing error) error {
	h := strings.ToUpper(firstLabelPresentation(sig.Hdr.Name))
	for i, n := range b.nsec3 {
		if n.hash != h {
			continue
		}
		for j, have := range n.sigs {
			if dns.IsDuplicate(have, sig) {
				c := b.ownNSEC3(i)
				c.sigs = slices.Delete(c.sigs, j, j+1)
				b.records--
				return nil
			}
		}
	}
	return missing
}

// ownNSEC3 returns a copy of the i'th NSEC3 node that this Builder may change.
func (b *Builder) ownNSEC3(i int) *nsec3Node {
	n := b.nsec3[i]
	if b.nsec3Owned[n] {
		return n
	}
	c := &nsec3Node{hash: n.hash, rr: n.rr, sigs: slices.Clone(n.sigs)}
	b.nsec3[i] = c
	b.nsec3Owned[c] = true
	b.nsec3Changed = true
	return c
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

// usedAfterBuild is the error of a Builder added to or built again after
// Build: the Builder itself, so that a build does not allocate (two
// allocations of a member's transfer's 156) an error that is almost never
// returned.
type usedAfterBuild Builder

func (e *usedAfterBuild) Error() string {
	return fmt.Sprintf("zone %q: used after Build", e.origin)
}

// Build validates the version and computes everything queries will ask of it:
// empty non-terminals, wildcard owners, zone cuts, the NSEC chain's order and
// each name's NSEC3 hash. A version that fails validation is not returned,
// and the version it was edited from is unchanged either way.
func (b *Builder) Build() (*Zone, error) {
	if b.err != nil {
		return nil, b.err
	}
	b.err = (*usedAfterBuild)(b)
	defer b.pace.Close()
	b.dropEmptied()
	if b.retimed != nil {
		b.retimed.seen = nil
	}
	z := &Zone{origin: b.origin, originKey: b.originKey, file: b.file, nodes: b.nodes, records: b.records,
		retimed: b.retimed, ttlsDiffer: b.retimed != nil || (b.base != nil && b.base.ttlsDiffer)}
	if err := b.attachSigs(); err != nil {
		return nil, err
	}
	if apex := b.nodes[b.originKey]; apex == nil || apex.get(dns.TypeSOA) == nil {
		return nil, b.errorf(0, "no SOA record at the apex")
	}
	b.link()

	// Names whose own records changed, and names new in this version, get
	// their flags computed again; cuts for the whole zone only if some name
	// became or stopped being a cut.
	cutsMoved := b.base == nil
	for k := range b.touched {
		b.pace.Tick()
		n := b.nodes[k]
		if n == nil {
			continue
		}
		wasCut := n.delegation || n.dname
		b.flags(n)
		// A new name has no old descendants whose cut could move.
		if !b.owned[n] && wasCut != (n.delegation || n.dname) {
			cutsMoved = true
		}
	}
	for n, fresh := range b.owned {
		b.pace.Tick()
		if fresh {
			b.flags(n)
		}
	}
	// The apex is taken only now: link and flags may copy it (a new name
	// below it counts among its children, a wildcard below it marks it),
	// and until then they know it by its key. Taken before them, it was
	// the node before the copy, and an edit that added "*" at the apex
	// answered NXDOMAIN for the names it covers (that node had no
	// hasWildcard), where the file parsed whole expanded the wildcard
	// (TestReparseAnswersAsParse).
	z.apex = b.nodes[b.originKey]
	b.cuts(z, cutsMoved)

	for k := range b.touched {
		b.pace.Tick()
		if n := b.nodes[k]; n != nil {
			if err := b.checkNode(z, n); err != nil {
				return nil, err
			}
		}
	}
	if err := b.checkGlue(z, cutsMoved); err != nil {
		return nil, err
	}
	if err := b.soa(z); err != nil {
		return nil, err
	}
	if err := b.dnssec(z); err != nil {
		return nil, err
	}
	z.idx = b.indexFor(z)
	if z.idx == nil {
		z.few, z.nodes = fewOf(z.nodes), nil
	}
	return z, nil
}

// dropEmptied removes the RRsets and NSEC3 records this edit deleted every
// record of, with the signatures still beside them: signatures of nothing.
// Before attachSigs, so that a new signature of what is gone is still an
// error.
func (b *Builder) dropEmptied() {
	for k := range b.touched {
		n := b.nodes[k]
		if n == nil || !slices.ContainsFunc(n.rrsets, func(s rrset) bool { return len(s.rrs) == 0 }) {
			continue
		}
		n = b.mutable(k, "", false)
		n.rrsets = slices.DeleteFunc(n.rrsets, func(s rrset) bool {
			if len(s.rrs) == 0 {
				b.records -= len(s.sigs)
				return true
			}
			return false
		})
	}
	b.nsec3 = slices.DeleteFunc(b.nsec3, func(n *nsec3Node) bool {
		if n.rr == nil {
			b.records -= len(n.sigs)
			return true
		}
		return false
	})
}

// attachSigs puts every pending RRSIG beside the RRset it covers, or the NSEC3 it covers.
func (b *Builder) attachSigs() error {
	var n3 map[string]int
	for _, p := range b.pending {
		k, _ := key(p.sig.Hdr.Name)
		if p.sig.TypeCovered == dns.TypeNSEC3 {
			if n3 == nil {
				n3 = make(map[string]int, len(b.nsec3))
				for i, n := range b.nsec3 {
					n3[n.hash] = i
				}
			}
			i, ok := n3[strings.ToUpper(firstLabelPresentation(p.sig.Hdr.Name))]
			if !ok {
				return b.errorf(p.line, "RRSIG for NSEC3 at %q without the NSEC3 it covers", p.sig.Hdr.Name)
			}
			c := b.ownNSEC3(i)
			c.sigs = append(c.sigs, p.sig)
			continue
		}
		var s *rrset
		if n := b.mutable(k, "", false); n != nil {
			s = n.get(p.sig.TypeCovered)
			b.touched[k] = struct{}{}
		}
		if s == nil {
			return b.errorf(p.line, "RRSIG at %q covers %s, which that name does not have", p.sig.Hdr.Name, dns.TypeToString[p.sig.TypeCovered])
		}
		s.sigs = append(s.sigs, p.sig)
	}
	b.pending = nil
	return nil
}

// link keeps every name's ancestors in the zone: a new name gets its missing
// ancestors as empty non-terminals, and a name left without records is
// removed, with the empty non-terminals that only it kept.
func (b *Builder) link() {
	// New names first, by depth, so that a parent exists before its children count.
	var fresh []*node
	for n, isNew := range b.owned {
		if isNew {
			fresh = append(fresh, n)
		}
	}
	for _, n := range fresh {
		b.pace.Tick()
		for k := n.key; k != b.originKey; {
			pk := parentKey(k)
			if b.nodes[pk] != nil {
				b.mutable(pk, "", false).children++
				break
			}
			p := b.mutable(pk, presentation(pk), true)
			p.children++
			p.ent = true
			k = pk
		}
	}
	for k := range b.touched {
		n := b.nodes[k]
		if n == nil || len(n.rrsets) > 0 || k == b.originKey {
			continue
		}
		if n.children > 0 {
			n.ent = true
			continue
		}
		// Remove it, and each ancestor it leaves empty.
		for k != b.originKey {
			delete(b.nodes, k)
			b.gone = append(b.gone, k)
			pk := parentKey(k)
			p := b.mutable(pk, "", false)
			p.children--
			if isWildcardKey(k) {
				p.hasWildcard = false
			}
			b.touched[pk] = struct{}{}
			if p.children > 0 || len(p.rrsets) > 0 || pk == b.originKey {
				break
			}
			k = pk
		}
	}
}

// flags computes what a node's own records say about it.
func (b *Builder) flags(n *node) {
	// slices.SortFunc, not sort.Slice: its swapper is two allocations a
	// node, a tenth of a small zone's (a catalog member's) transfer.
	slices.SortFunc(n.rrsets, func(a, b rrset) int { return cmp.Compare(a.typ, b.typ) })
	apex := n.key == b.originKey
	n.ent = len(n.rrsets) == 0 && !apex
	n.delegation = !apex && n.get(dns.TypeNS) != nil
	n.dname = n.get(dns.TypeDNAME) != nil
	n.alias = n.get(record.TypeALIAS) != nil
	n.allSigs = nil
	for i := range n.rrsets {
		b.shareTargets(n.rrsets[i].rrs)
	}
	// Versions hold their slices for as long as they are served: none
	// keeps the spare room append left (a million small zones,
	// bench/zones.sh).
	n.rrsets = fit(n.rrsets)
	for i := range n.rrsets {
		s := &n.rrsets[i]
		s.rrs, s.sigs = fit(s.rrs), fit(s.sigs)
		if len(s.sigs) > 0 {
			if n.allSigs == nil {
				n.allSigs = &rrset{typ: dns.TypeRRSIG}
			}
			n.allSigs.rrs = append(n.allSigs.rrs, s.sigs...)
		}
	}
	n.sortKey = ""
	if n.get(dns.TypeNSEC) != nil {
		n.sortKey = string(appendSortKey(nil, n.key))
	}
	if isWildcardKey(n.key) {
		p := b.mutable(parentKey(n.key), "", false)
		p.hasWildcard = true
	}
}

// cuts computes each name's cut: for every name when all is set, else for
// the names new in this version, whose ancestors' cuts did not move.
func (b *Builder) cuts(z *Zone, all bool) {
	var nodes []*node
	if all {
		nodes = make([]*node, 0, len(b.nodes))
		for _, n := range b.nodes {
			nodes = append(nodes, n)
		}
	} else {
		for n, fresh := range b.owned {
			if fresh && b.nodes[n.key] == n {
				nodes = append(nodes, n)
			}
		}
	}
	// Parents before children: a key is longer than its parent's.
	slices.SortFunc(nodes, func(a, b *node) int { return cmp.Compare(len(a.key), len(b.key)) })
	for _, n := range nodes {
		b.pace.Tick()
		cut, below := "", false
		if n != z.apex {
			if p := b.nodes[parentKey(n.key)]; p != nil && p.cut != "" {
				cut, below = p.cut, true
			} else if n.delegation || n.dname {
				cut = n.key
			}
		}
		if n.cut != cut || n.belowCut != below {
			m := b.mutable(n.key, "", false)
			m.cut, m.belowCut = cut, below
		}
	}
}

// checkNode refuses data no server may serve: a CNAME beside other data
// (RFC 1034 section 3.6.2, RFC 2181 section 10.1), more than one CNAME or
// DNAME, and names below a DNAME (RFC 6672 section 2.3), as Knot DNS
// refuses them.
func (b *Builder) checkNode(z *Zone, n *node) error {
	if cname := n.get(dns.TypeCNAME); cname != nil {
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
	if a := n.get(record.TypeALIAS); a != nil && len(a.rrs) > 1 {
		return b.errorf(0, "%q has %d ALIAS records, want 1", n.name, len(a.rrs))
	}
	if d := n.get(dns.TypeDNAME); d != nil {
		if len(d.rrs) > 1 {
			return b.errorf(0, "%q has %d DNAME records, want 1", n.name, len(d.rrs))
		}
		if n.children > 0 {
			return b.errorf(0, "names are below the DNAME at %q, which RFC 6672 section 2.3 forbids", n.name)
		}
	}
	// A name with data below a DNAME: found from the name, as an edit that
	// adds it need not touch the DNAME's node. Only a name below some cut
	// (its topmost) or an apex DNAME can be.
	if len(n.rrsets) > 0 && n != z.apex && (n.cut != "" || z.apex.get(dns.TypeDNAME) != nil) {
		for k := parentKey(n.key); len(k) >= len(b.originKey); k = parentKey(k) {
			if p := b.nodes[k]; p != nil && p.get(dns.TypeDNAME) != nil {
				return b.errorf(0, "%q is below the DNAME at %q, which RFC 6672 section 2.3 forbids", n.name, p.name)
			}
			if k == b.originKey {
				break
			}
		}
	}
	return nil
}

// shareTargets points the target names of NS, MX and CNAME records at the
// name of the node they name, where the zone holds it spelled the same:
// one string for both instead of the parser's two (memory per record).
func (b *Builder) shareTargets(rrs []dns.RR) {
	var buf [maxName + 1]byte
	share := func(target *string) {
		kb, err := appendKey(buf[:0], *target)
		if err != nil {
			return
		}
		if t := b.nodes[string(kb)]; t != nil && t.name == *target {
			*target = t.name
		}
	}
	for _, rr := range rrs {
		switch r := rr.(type) {
		case *dns.NS:
			share(&r.Ns)
		case *dns.MX:
			share(&r.Mx)
		case *dns.CNAME:
			share(&r.Target)
		default:
			return // one type per RRset: none of these
		}
	}
}

// fit returns s in an array of its own length, if append left it room.
func fit[T any](s []T) []T {
	if cap(s) == len(s) {
		return s
	}
	return append(make([]T, 0, len(s)), s...)
}

// duplicate is dns.IsDuplicate, which knows nothing of private types such
// as ALIAS: two ALIAS records are the same when their targets are.
func duplicate(a, b dns.RR) bool {
	if a.Header().Rrtype == record.TypeALIAS && b.Header().Rrtype == record.TypeALIAS {
		return equalName(a.Header().Name, b.Header().Name) &&
			equalName(dns.Fqdn(record.Target(a)), dns.Fqdn(record.Target(b)))
	}
	return dns.IsDuplicate(a, b)
}

// checkGlue refuses a delegation whose in-bailiwick name servers have no
// address in the zone: without that glue the child cannot be reached
// (RFC 9471 requires it to be sent). The apex NS targets inside the zone must
// have addresses too, unless they sit under another cut. An edit checks the
// delegations at and above the names it touched; all of them where the
// cuts moved (all): a cut gone uncovers the delegations below it, and an
// edit that deleted "c NS" left "c.a.c NS ns.c.a.c" without its glue
// unchecked, a zone Parse refuses (TestReparseAnswersAsParse).
func (b *Builder) checkGlue(z *Zone, all bool) error {
	check := map[string]struct{}{b.originKey: {}}
	if all {
		for k, n := range b.nodes {
			if n.delegation {
				check[k] = struct{}{}
			}
		}
	} else {
		for k := range b.touched {
			for ; len(k) > len(b.originKey); k = parentKey(k) {
				if n := b.nodes[k]; n != nil && n.delegation {
					check[k] = struct{}{}
				}
			}
		}
	}
	for k := range check {
		b.pace.Tick()
		n := b.nodes[k]
		if n == nil || n.belowCut || n.get(dns.TypeNS) == nil {
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
			t := b.nodes[tk]
			if n == z.apex {
				if t != nil && t.belowCut {
					continue
				}
			} else if !subdomainKey(tk, n.key) {
				continue // sibling glue is optional
			}
			if t == nil || (t.get(dns.TypeA) == nil && t.get(dns.TypeAAAA) == nil) {
				return b.errorf(0, "glue missing: NS %q of %q has no A or AAAA record in the zone", target, n.name)
			}
		}
	}
	return nil
}

// soa reads the serial and prepares the SOA of negative answers.
func (b *Builder) soa(z *Zone) error {
	soas := z.apex.get(dns.TypeSOA).rrs
	if len(soas) != 1 {
		return b.errorf(0, "%d SOA records at the apex, want 1", len(soas))
	}
	z.soa = soas[0].(*dns.SOA)
	z.serial = z.soa.Serial
	if _, changed := b.touched[b.originKey]; !changed && b.base != nil {
		z.negSOA, z.negSet = b.base.negSOA, b.base.negSet
		return nil
	}
	neg := dns.Copy(z.soa).(*dns.SOA)
	neg.Hdr.Ttl = min(neg.Hdr.Ttl, neg.Minttl)
	z.negSOA = neg
	z.negSet = []dns.RR{neg}
	for _, sig := range z.apex.get(dns.TypeSOA).sigs {
		c := dns.Copy(sig)
		c.Header().Ttl = neg.Hdr.Ttl
		z.negSet = append(z.negSet, c)
	}
	return nil
}

// dnssec orders the NSEC chain and hashes every name for the NSEC3 chain.
func (b *Builder) dnssec(z *Zone) error {
	z.signed = z.apex.get(dns.TypeDNSKEY) != nil && len(z.apex.get(dns.TypeSOA).sigs) > 0

	// The chain holds node pointers: it is rebuilt when a node in it was
	// copied, or a name came or went.
	nsecMoved := b.base == nil || len(b.gone) > 0
	for n := range b.owned {
		if nsecMoved {
			break
		}
		if n.sortKey != "" {
			nsecMoved = true
		} else if old := b.base.nodes[n.key]; old != nil && old.sortKey != "" {
			nsecMoved = true
		}
	}
	if nsecMoved {
		z.nsec = z.nsec[:0]
		for _, n := range b.nodes {
			if n.sortKey != "" {
				z.nsec = append(z.nsec, n)
			}
		}
		slices.SortFunc(z.nsec, func(a, b *node) int { return strings.Compare(a.sortKey, b.sortKey) })
		z.nsecOrigin = string(appendSortKey(nil, z.originKey))
		z.nsecPrefix = make([]uint64, len(z.nsec))
		for i, n := range z.nsec {
			z.nsecPrefix[i] = z.nsecPrefixOf(n.sortKey)
		}
	} else {
		z.nsec, z.nsecPrefix, z.nsecOrigin = b.base.nsec, b.base.nsecPrefix, b.base.nsecOrigin
	}
	if len(z.nsec) > 0 {
		z.apexWildcard = z.coverNSEC(wildcardKey(z.apex.key))
	}

	if len(b.nsec3) == 0 {
		return nil
	}
	if b.nsec3Changed || b.base == nil {
		slices.SortFunc(b.nsec3, func(x, y *nsec3Node) int { return strings.Compare(x.hash, y.hash) })
	}
	z.nsec3 = b.nsec3
	if p := z.apex.get(dns.TypeNSEC3PARAM); p != nil {
		z.n3p = p.rrs[0].(*dns.NSEC3PARAM)
	} else {
		r := b.nsec3[0].rr
		z.n3p = &dns.NSEC3PARAM{Hash: r.Hash, Iterations: r.Iterations, SaltLength: r.SaltLength, Salt: r.Salt}
	}
	z.n3salt = saltOf(z.n3p)
	for i, n := range b.nsec3 {
		if b.base == nil || b.nsec3Owned[n] { // the rest are the last version's, homed then
			b.pace.Tick()
			b.nsec3[i] = homeNSEC3(n, b.origin, z.n3p.Salt)
		}
	}
	z.indexNSEC3()
	rehashAll := b.base == nil || b.base.n3p == nil || b.base.n3p.String() != z.n3p.String()
	for k, n := range b.nodes {
		b.pace.Tick()
		if rehashAll || n.nsec3Hash == "" {
			b.mutable(k, "", false).nsec3Hash = z.hash(k)
		}
	}
	if z.findNSEC3(z.apex.nsec3Hash) == nil {
		return b.errorf(0, "NSEC3 chain has no record for the apex (NSEC3PARAM %s)", z.n3p.String())
	}
	z.apexWildcard3 = z.coverWildcard(z.apex.key)
	return nil
}
