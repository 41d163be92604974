package zonestore

import (
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/alias/record"
	"github.com/ontimedns/ontime/internal/ahead"
)

// Response is the authoritative answer to one question, before it is packed.
// The records in it are the zone's own and must not be modified (records
// whose owner had to change case are copies). Answer and Ns may be the
// zone's own slices too, their capacity cut to their length: append to them
// (that copies), but never write into them, nor shorten one and append to
// it; to reuse a Response, truncate them to [:0] and pass it back to
// Answer, which starts them afresh. Extra is always the caller's.
type Response struct {
	Rcode         int
	Authoritative bool
	Answer        []dns.RR
	Ns            []dns.RR
	Extra         []dns.RR

	// Alias is the ALIAS record (owner spelled as in the answer) at the
	// name that answered an A or AAAA question, CNAMEs followed; nil if
	// none. The answer itself is what the zone holds: the name's own
	// addresses, or NODATA. Resolving the ALIAS is the caller's choice.
	Alias dns.RR
	// SOA is the zone's SOA as negative answers carry it, set with Alias:
	// what a NODATA built from the ALIAS target's answer needs.
	SOA dns.RR

	// QuestionInData is whether a name made of the question's labels
	// stands in a record's data: a DNAME's synthesized CNAME, whose target
	// is the question's first labels over the DNAME's target, in the case
	// they were asked in. Elsewhere the question's name is only an owner
	// (kept in the case asked, where it is the question's), which a
	// packer that compresses names writes as a pointer to the question:
	// the answer's octets then hold the asked case only in the question
	// section, and one answer serves every spelling (replay's AnyCase).
	QuestionInData bool

	// reuse: the three sections are arrays of the Response's own, kept by
	// Reuse; an answer copies the zone's records into them rather than
	// take the zone's slices.
	reuse bool
	// as and aaaas hold the A and AAAA records an answer made with a new
	// owner, where reuse (owned).
	as    []dns.A
	aaaas []dns.AAAA
	// proofRRs and proofSeen are the rooms of an answer's proof (proof),
	// where reuse: grown from nothing, a denial's were four allocations a
	// query.
	proofRRs  []dns.RR
	proofSeen []any
}

// Reuse readies res for the next Answer into it, keeping its sections'
// arrays: from then on an answer copies the zone's records into them
// instead of taking the zone's slices, so that a section built of more
// than one RRset (a CNAME and its target, a referral's glue, additional
// records, a denial's proofs) is appended without an allocation. A
// section that was the zone's own slice, or none, gets a fresh array the
// first time. The records they held are cleared, so that no older version
// of a zone is kept alive by them. The caller must be done with the
// sections and anything that carries them.
func (res *Response) Reuse() {
	keep := func(s []dns.RR) []dns.RR {
		if !res.reuse || cap(s) == 0 {
			return make([]dns.RR, 0, 8)
		}
		clear(s[:cap(s)]) // what a writer appended past the section too (Truncate's OPT)
		return s[:0]
	}
	clear(res.as)
	clear(res.aaaas)
	clear(res.proofRRs[:cap(res.proofRRs)])
	clear(res.proofSeen[:cap(res.proofSeen)])
	*res = Response{Answer: keep(res.Answer), Ns: keep(res.Ns), Extra: keep(res.Extra), reuse: true,
		as: res.as[:0], aaaas: res.aaaas[:0], proofRRs: res.proofRRs[:0], proofSeen: res.proofSeen[:0]}
}

// maxChain bounds how many CNAME and DNAME hops one answer follows inside the zone.
const maxChain = 20 // Knot's CNAME_CHAIN_MAX

// Lookup answers qname/qtype from this version of the zone, by RFC 1034
// section 4.3.2 and its successors, the way Knot DNS answers: CNAME chains
// followed inside the zone, DNAME substitution (RFC 6672), wildcards
// (RFC 4592), referrals with glue, negative answers with the SOA (RFC 2308),
// and with do set, the zone's signatures and NSEC or NSEC3 proofs.
// qname must be at or below the zone's origin; its case is kept in the answer.
func (z *Zone) Lookup(qname string, qtype uint16, do bool) Response {
	var res Response
	z.LookupInto(&res, qname, qtype, do)
	return res
}

// LookupInto is Lookup appending into res, whose Extra a caller may reuse
// (see Response).
func (z *Zone) LookupInto(res *Response, qname string, qtype uint16, do bool) {
	n, err := NewName(qname)
	if err != nil {
		res.Rcode = dns.RcodeServerFailure
		return
	}
	z.Answer(res, n, qtype, do)
}

// Answer is LookupInto for a name prepared with NewName (and found with
// Store.FindName), so a query computes its key once.
func (z *Zone) Answer(res *Response, n Name, qtype uint16, do bool) {
	z.AnswerWarmed(res, n, qtype, do, nil)
}

// AnswerWarmed is Answer for a query that was warmed, with its note
// (Store.Warm; nil: none). What the warming found for the question (the
// NSEC3 record that covers a name the zone lacks: warmcover.go) the answer
// reads from the note instead of finding it again, once it has checked
// that the note found it for that name in this version of the zone.
func (z *Zone) AnswerWarmed(res *Response, n Name, qtype uint16, do bool, note *ahead.Note) {
	res.Rcode, res.Authoritative, res.QuestionInData = dns.RcodeSuccess, true, false
	// An empty section may be a slice of the zone's, from an answer before
	// this one: start it afresh rather than append into the zone. Not
	// where Reuse made the sections the Response's own.
	if len(res.Answer) == 0 && !res.reuse {
		res.Answer = nil
	}
	if len(res.Ns) == 0 && !res.reuse {
		res.Ns = nil
	}
	do = do && z.signed
	if !subdomainKey(n.key, z.originKey) {
		res.Rcode = dns.RcodeServerFailure
		return
	}
	l := lookup{z: z, res: res, do: do, qtype: qtype, proof: proof{z: z, warmed: note}}
	if res.reuse {
		l.proof.rrs, l.proof.seen = res.proofRRs[:0], res.proofSeen[:0]
	}
	l.run(n.text, n.key)
	if len(l.proof.rrs) > 0 {
		res.Ns = append(res.Ns, l.proof.rrs...)
	}
	if res.reuse { // the rooms as they grew, for the next answer
		res.proofRRs, res.proofSeen = l.proof.rrs[:0], l.proof.seen[:0]
	}
}

// lookup is the state of one answer as it follows CNAMEs and DNAMEs.
type lookup struct {
	z       *Zone
	res     *Response
	do      bool
	qtype   uint16
	proof   proof
	visited [maxChain]*node
	hops    int // nodes in visited
	// followed counts the CNAMEs and DNAMEs followed, a DNAME met again
	// for another name among them, up to maxChain.
	followed int
}

func (l *lookup) run(name, k string) {
	z := l.z
	for {
		class, n := z.classify(k)
		src, ce, wildcard := n, n, false
		switch class {
		case BelowCut:
			if n.delegation {
				l.referral(n)
				return
			}
			next, nk, ok := l.dname(n, name, k)
			if !ok {
				return
			}
			name, k = next, nk
			continue
		case Delegation:
			if l.qtype != dns.TypeDS {
				l.referral(n)
				return
			}
		case Nonexistent:
			l.nxdomain(k, n)
			return
		case Wildcard:
			src, wildcard = z.wildcardOf(n), true
		case Exact:
			// The name asked, spelled as the zone spells it (the usual
			// case), is answered with the zone's own string: its records'
			// owners are that string, so every later comparison with them
			// (ownedBy, the encoder's) is one of two equal pointers rather
			// than of their octets.
			if name == n.name {
				name = n.name
			}
		}

		// A CNAME is followed unless the question is for a type of its
		// name's own (CNAME, ANY, RRSIG, NSEC: the name's, not its
		// target's), as Knot answers.
		if cname := src.get(dns.TypeCNAME); cname != nil && l.qtype != dns.TypeCNAME && l.qtype != dns.TypeANY &&
			l.qtype != dns.TypeRRSIG && l.qtype != dns.TypeNSEC {
			if l.seen(src) {
				// A CNAME loop: answer with what the chain has so far. A
				// wildcard's CNAME met again for a name it was not yet
				// expanded for is that name's, and goes in first, as
				// Knot puts it before it sees the loop.
				if wildcard && !holds(l.res.Answer, name, dns.TypeCNAME) {
					l.put(&l.res.Answer, cname, name)
					if l.do {
						l.proof.expansion(k, ce)
					}
				}
				return
			}
			l.put(&l.res.Answer, cname, name)
			if wildcard && l.do {
				l.proof.expansion(k, ce)
			}
			target := cname.rrs[0].(*dns.CNAME).Target
			tk, err := z.keyOf(target)
			l.followed++
			if err != nil || !subdomainKey(tk, z.originKey) || l.followed >= maxChain {
				return // out of the zone: the resolver follows it
			}
			name, k = target, tk
			continue
		}

		if src.alias && (l.qtype == dns.TypeA || l.qtype == dns.TypeAAAA) {
			a := src.get(record.TypeALIAS).rrs[0]
			if a.Header().Name != name {
				a = dns.Copy(a)
				a.Header().Name = name
			}
			l.res.Alias, l.res.SOA = a, z.negSOA
		}
		s := l.pick(src)
		if s == nil {
			l.nodata(src, k, ce, wildcard)
			return
		}
		first := len(l.res.Answer) == 0
		switch {
		case l.qtype == dns.TypeRRSIG:
			l.res.Answer = l.res.appendOwned(l.res.Answer, s.sigs, name)
		case holds(l.res.Answer, name, s.typ):
			// The chain came back to a record it holds already (a DNAME
			// asked for, met on the way to its own owner): once.
		default:
			l.put(&l.res.Answer, s, name)
		}
		if wildcard && l.do {
			if l.qtype == dns.TypeNSEC && first {
				// The wildcard's NSEC answers, the first record of
				// the answer: where it is also the proof, it is not
				// sent again, as Knot answers (its check for a record
				// already in the packet finds it; after a CNAME or a
				// DNAME it does not, and the proof goes).
				l.proof.seen = append(l.proof.seen, src)
			}
			l.proof.expansion(k, ce)
		}
		if l.qtype != dns.TypeRRSIG {
			l.additional(s) // RRSIGs name no host to add
		}
		return
	}
}

// pick returns the RRset that answers the question at n, or nil. ANY is
// answered with one RRset, the lowest type, as Knot does (RFC 8482 allows
// any subset), where all of a signed name's RRSIGs count as one RRset of type
// RRSIG; a question for RRSIG gets the signatures of the lowest signed type.
// An ALIAS record is never an answer: it stands for addresses resolved at
// query time, and a client asking for the type itself gets NODATA.
func (l *lookup) pick(n *node) *rrset {
	switch l.qtype {
	case record.TypeALIAS:
		return nil
	case dns.TypeANY:
		if len(n.rrsets) == 0 || n.rrsets[0].typ == record.TypeALIAS {
			return nil // ALIAS sorts last: it is alone
		}
		if n.rrsets[0].typ > dns.TypeRRSIG && n.allSigs != nil {
			return n.allSigs
		}
		return &n.rrsets[0]
	case dns.TypeRRSIG:
		for i := range n.rrsets {
			if len(n.rrsets[i].sigs) > 0 {
				return &n.rrsets[i]
			}
		}
		return nil
	}
	return n.get(l.qtype)
}

// seen records n as visited by the chain and reports whether it was already.
func (l *lookup) seen(n *node) bool {
	for _, v := range l.visited[:l.hops] {
		if v == n {
			return true
		}
	}
	if l.hops < maxChain {
		l.visited[l.hops] = n
		l.hops++
	}
	return false
}

// wildcardOf returns the node "*." + n's name; n.hasWildcard says it exists.
// Out of line for the same reason as key.
//
//go:noinline
func (z *Zone) wildcardOf(n *node) *node {
	var buf [maxName + 3]byte
	b := append(append(buf[:0], 1, '*'), n.key...)
	return z.named(keyOfBytes(b))
}

// put appends an RRset under owner (the question's case for the name asked,
// the zone's for names reached by a CNAME), with its signatures when DO is set.
func (l *lookup) put(sec *[]dns.RR, s *rrset, owner string) {
	*sec = l.res.appendOwned(*sec, s.rrs, owner)
	if l.do {
		*sec = l.res.appendOwned(*sec, s.sigs, owner)
	}
}

// appendOwned appends rrs to an answer or authority section, copying only
// those whose owner is not spelled as owner (a mixed-case question, or a
// wildcard expansion). When the section is empty and no record needs a
// copy, it takes the zone's slice itself (see share).
func (res *Response) appendOwned(dst []dns.RR, rrs []dns.RR, owner string) []dns.RR {
	if len(dst) == 0 && ownedBy(rrs, owner) {
		return share(dst, rrs)
	}
	for _, rr := range rrs {
		if rr.Header().Name != owner {
			rr = res.owned(rr, owner)
		}
		dst = append(dst, rr)
	}
	return dst
}

// owned is a copy of rr owned by owner. Where Reuse keeps the Response's
// arrays, an A or AAAA record (a wildcard's usual answer) is copied into
// one of them, its address shared with the zone's record, which nothing
// writes; any other record is dns.Copy's.
func (res *Response) owned(rr dns.RR, owner string) dns.RR {
	if res.reuse {
		switch r := rr.(type) {
		case *dns.A:
			res.as = append(res.as, *r)
			c := &res.as[len(res.as)-1]
			c.Hdr.Name = owner
			return c
		case *dns.AAAA:
			res.aaaas = append(res.aaaas, *r)
			c := &res.aaaas[len(res.aaaas)-1]
			c.Hdr.Name = owner
			return c
		}
	}
	c := dns.Copy(rr)
	c.Header().Name = owner
	return c
}

func ownedBy(rrs []dns.RR, owner string) bool {
	for _, rr := range rrs {
		if rr.Header().Name != owner {
			return false
		}
	}
	return true
}

// share appends rrs, which the zone holds, to an answer or authority
// section; an empty section without an array of its own (Reuse) takes the
// zone's slice itself, its capacity cut to its length so that any later
// append copies it, rather than a copy: most answers are one RRset, and
// need no allocation for it. Stock file
// answers from its zone the same way, and CoreDNS's plugins leave such
// slices as they are (loadbalance copies before it shuffles). The
// additional section is never shared: miekg/dns's Truncate shortens it and
// appends the OPT record after what it kept.
func share(dst, rrs []dns.RR) []dns.RR {
	if len(dst) == 0 && cap(dst) == 0 {
		return rrs[:len(rrs):len(rrs)]
	}
	return append(dst, rrs...)
}

func (l *lookup) soa() {
	n := 1
	if l.do {
		n = len(l.z.negSet)
	}
	l.res.Ns = share(l.res.Ns, l.z.negSet[:n])
}

func (l *lookup) nxdomain(k string, ce *node) {
	l.res.Rcode = dns.RcodeNameError
	l.soa()
	if l.do {
		l.proof.denyName(k, ce, true)
	}
}

func (l *lookup) nodata(n *node, k string, ce *node, wildcard bool) {
	l.soa()
	if !l.do {
		return
	}
	if wildcard {
		// RFC 4035 section 3.1.3.4, RFC 5155 section 7.2.5.
		l.proof.noData(n)
		if l.z.nsec3 != nil {
			l.proof.denyName(k, ce, false)
		} else {
			l.proof.expansion(k, ce)
		}
		return
	}
	l.proof.noData(n)
}

// referral answers with the delegation at cut: its NS in the authority
// section, DS or the proof of its absence with DO, and the addresses of its
// name servers that the zone holds (glue) in the additional section.
func (l *lookup) referral(cut *node) {
	if len(l.res.Answer) == 0 {
		l.res.Authoritative = false
	}
	ns := cut.get(dns.TypeNS)
	l.res.Ns = share(l.res.Ns, ns.rrs)
	if l.do {
		if ds := cut.get(dns.TypeDS); ds != nil {
			l.put(&l.res.Ns, ds, ds.rrs[0].Header().Name)
		} else {
			l.proof.noData(cut)
		}
	}
	l.additional(ns)
}

// dname substitutes the DNAME at cut into name (RFC 6672 section 2.2): the
// DNAME and a synthesized CNAME join the answer, and the chain goes on at the
// new name if it is in the zone. ok is false when the answer is complete.
func (l *lookup) dname(cut *node, name, k string) (string, string, bool) {
	d := cut.get(dns.TypeDNAME)
	if l.seen(cut) {
		// Met again, for another name: no loop while the names differ
		// (d.c to d.b by a CNAME, back to a.c, to a.b by c's DNAME
		// again), and the CNAME it makes for this one goes in, as Knot
		// answers, beside its record already there. A name it made one
		// for before is a loop.
		if holds(l.res.Answer, name, dns.TypeCNAME) {
			return "", "", false
		}
	} else {
		l.put(&l.res.Answer, d, d.rrs[0].Header().Name)
	}
	dn := d.rrs[0].(*dns.DNAME)

	// The labels of name above the DNAME owner are replaced by its target.
	prefix := labelCount(k) - labelCount(cut.key)
	target := keepLabels(name, prefix) + dns.Fqdn(dn.Target)
	if dn.Target == "." {
		target = keepLabels(name, prefix)
	}
	tk, err := key(target)
	if err != nil {
		l.res.Rcode = dns.RcodeYXDomain // RFC 6672 section 2.2: the result is too long
		return "", "", false
	}
	l.res.QuestionInData = true
	l.res.Answer = append(l.res.Answer, &dns.CNAME{
		Hdr:    dns.RR_Header{Name: name, Rrtype: dns.TypeCNAME, Class: dns.ClassINET, Ttl: dn.Hdr.Ttl},
		Target: target,
	})
	l.followed++
	if l.qtype == dns.TypeCNAME || !subdomainKey(tk, l.z.originKey) || l.followed >= maxChain {
		return "", "", false // a synthesized CNAME answers a CNAME question itself
	}
	return target, tk, true
}

// keepLabels returns the first n labels of a presentation name, with their dots.
func keepLabels(name string, n int) string {
	i := 0
	for ; n > 0 && i < len(name); i++ {
		switch name[i] {
		case '\\':
			i++
			if i+2 < len(name) && isDigit(name[i]) {
				i += 2
			}
		case '.':
			n--
		}
	}
	return name[:i]
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// additional adds what the zone holds for the names in the RDATA of NS, MX,
// SRV, SVCB and HTTPS records (RFC 1034 section 4.3.2 step 6, RFC 2782,
// RFC 9460 section 4): their A and AAAA, and for SVCB and HTTPS the target's
// own record of that type, or with DO the NSEC or NSEC3 that proves it
// missing, as Knot does. Signed when DO is set. CNAMEs are not followed
// (RFC 2181 section 10.3).
func (l *lookup) additional(s *rrset) {
	want := [3]uint16{dns.TypeA, dns.TypeAAAA}
	types := want[:2]
	if s.typ == dns.TypeSVCB || s.typ == dns.TypeHTTPS {
		want[2] = s.typ
		types = want[:3]
	}
	for _, rr := range s.rrs {
		var target string
		switch r := rr.(type) {
		case *dns.NS:
			target = r.Ns
		case *dns.MX:
			target = r.Mx
		case *dns.SRV:
			target = r.Target
		case *dns.SVCB:
			target = r.Target
		case *dns.HTTPS:
			target = r.Target
		default:
			return
		}
		t := l.z.nodeOf(target)
		expanded := false
		if t == nil {
			// A name the zone does not hold has the addresses of the
			// wildcard that covers it, under its own name (RFC 4592), as
			// Knot adds them (zone_contents_find_node_or_wildcard).
			if t = l.z.wildcardCovering(target); t == nil {
				continue
			}
			expanded = true
		}
		present := 0
		for _, typ := range types {
			a := t.get(typ)
			if a == nil {
				continue
			}
			present++
			if expanded {
				l.addExpanded(a, target)
				continue
			}
			if l.inAnswer(a) || holds(l.res.Answer, t.name, typ) {
				continue // there already (the answer's owner may be a copy in the question's case)
			}
			l.res.Extra = append(l.res.Extra, a.rrs...)
			if l.do {
				l.res.Extra = append(l.res.Extra, a.sigs...)
			}
		}
		if len(types) == 3 && present < 3 && l.do && !t.belowCut {
			l.proveMissingGlue(t)
		}
	}
}

// addExpanded adds a wildcard's RRset to the additional section as the
// name owner's, copies owned by owner, unless the answer holds it or an
// expansion of it is there already (two records with one target).
// Signatures go with it, owned by owner too, as a validator expects of an
// expansion (their labels field tells it).
func (l *lookup) addExpanded(a *rrset, owner string) {
	if holds(l.res.Answer, owner, a.typ) || holds(l.res.Extra, owner, a.typ) {
		return
	}
	for _, rr := range a.rrs {
		l.res.Extra = append(l.res.Extra, l.res.owned(rr, owner))
	}
	if l.do {
		for _, rr := range a.sigs {
			l.res.Extra = append(l.res.Extra, l.res.owned(rr, owner))
		}
	}
}

// proveMissingGlue adds the NSEC or NSEC3 of a SVCB target that lacks some
// of its additional records.
func (l *lookup) proveMissingGlue(t *node) {
	var p proof
	if l.z.nsec3 != nil {
		p.addNSEC3(l.z.findNSEC3(t.nsec3Hash))
	} else {
		p.addNSEC(t)
	}
	for _, rr := range p.rrs {
		if !l.inExtra(rr) {
			l.res.Extra = append(l.res.Extra, rr)
		}
	}
}

func (l *lookup) inExtra(x dns.RR) bool {
	for _, rr := range l.res.Extra {
		if rr == x {
			return true
		}
	}
	return false
}

// holds reports whether the section holds a record of type typ owned by
// owner.
func holds(sec []dns.RR, owner string, typ uint16) bool {
	for _, rr := range sec {
		if h := rr.Header(); h.Rrtype == typ && equalName(h.Name, owner) {
			return true
		}
	}
	return false
}

// inAnswer reports whether the RRset is already in the answer or additional
// section; additional records are never repeated (two MX with one target).
func (l *lookup) inAnswer(s *rrset) bool {
	first := s.rrs[0]
	for _, sec := range [2][]dns.RR{l.res.Answer, l.res.Extra} {
		for _, rr := range sec {
			if rr == first {
				return true
			}
		}
	}
	return false
}
