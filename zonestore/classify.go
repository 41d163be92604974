package zonestore

// Class is what a zone holds for a query name, found with one map lookup per
// label between the name and the origin: empty non-terminals, wildcards and
// cuts were computed when the zone was built, so nothing is searched for.
type Class int

const (
	Nonexistent      Class = iota // no such name, no wildcard to expand: NXDOMAIN
	Exact                         // the name owns records
	EmptyNonTerminal              // the name exists only because names below it do
	Wildcard                      // the name does not exist, a wildcard at its closest encloser covers it
	Delegation                    // the name is a zone cut: referral, except for DS
	BelowCut                      // the name is below a delegation or a DNAME
)

var classNames = [...]string{"nonexistent", "exact", "empty non-terminal", "wildcard", "delegation", "below cut"}

func (c Class) String() string { return classNames[c] }

// Classify returns the class of qname, which must be at or below the origin.
func (z *Zone) Classify(qname string) Class {
	k, err := key(qname)
	if err != nil || !subdomainKey(k, z.originKey) {
		return Nonexistent
	}
	c, _ := z.classify(k)
	return c
}

// classify returns the class of the name with key k and the node it turns
// on: the name's own node (Exact, EmptyNonTerminal, Delegation), the cut
// above it (BelowCut), or its closest encloser (Wildcard, Nonexistent).
func (z *Zone) classify(k string) (Class, *node) {
	n, exact := z.find(k)
	// A cut strictly above the name, or at its closest encloser when the
	// name is below it, ends authority.
	ck := n.cut
	if exact {
		ck = n.cutAbove()
	}
	switch {
	case ck != "" && ck == n.key:
		return BelowCut, n // the closest encloser is the cut: a referral's usual case, no second lookup
	case ck != "":
		return BelowCut, z.named(ck)
	case !exact && n.hasWildcard:
		return Wildcard, n
	case !exact:
		return Nonexistent, n
	case n.delegation:
		return Delegation, n
	case n.ent:
		return EmptyNonTerminal, n
	}
	return Exact, n
}

// find returns the node for k, or its closest encloser and exact false.
func (z *Zone) find(k string) (n *node, exact bool) {
	if n := z.node(k); n != nil {
		return n, true
	}
	for p := parentKey(k); len(p) > len(z.originKey); p = parentKey(p) {
		if n := z.node(p); n != nil {
			return n, false
		}
	}
	return z.apex, false
}

// wildcardCovering returns the wildcard node that covers name, which the
// zone does not hold (Class Wildcard), or nil: for a name outside the
// zone, below a cut, or with no wildcard at its closest encloser. The key
// is built on the stack and only looked up with.
func (z *Zone) wildcardCovering(name string) *node {
	var buf [maxName + 1]byte
	b, err := appendKey(buf[:0], name)
	if err != nil || len(b) == 0 {
		return nil
	}
	k := keyOfBytes(b)
	if !subdomainKey(k, z.originKey) {
		return nil
	}
	if c, n := z.classify(k); c == Wildcard {
		return z.wildcardOf(n)
	}
	return nil
}
