package conformance

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"

	"github.com/miekg/dns"
)

// A RandomZone is a zone drawn at random for differential testing: names
// of a few labels from a small alphabet, so that its cases meet in ways no
// hand-written zone lists (a wildcard beside an empty non-terminal below a
// DNAME's sibling, a CNAME into a delegation through a wildcard), and the
// names to ask around them. It keeps to what a zone may hold (RFC 1034
// 3.6.2: a CNAME alone at its name; RFC 6672 2.3: nothing below a DNAME;
// below a delegation, glue only) so that Knot DNS loads it and its answers
// are a reference.
type RandomZone struct {
	Origin string
	Text   string   // the zone file
	Ask    []string // names to ask, absolute
}

// randomLabels are the labels names are drawn from: few, so that names
// share ancestors and meet.
var randomLabels = []string{"a", "b", "c", "d"}

// randomKind is what a drawn name holds.
type randomKind int

const (
	kindData randomKind = iota
	kindCNAME
	kindDNAME
	kindDelegation
	kindGlue // below a delegation: addresses only
)

// drawLabels draws a relative name of one to most labels of randomLabels.
func drawLabels(rng *rand.Rand, most int) []string {
	labels := make([]string, 1+rng.IntN(most))
	for i := range labels {
		labels[i] = randomLabels[rng.IntN(len(randomLabels))]
	}
	return labels
}

// NewRandomZone draws a zone under origin with rng: 20 to 44 names of up
// to three labels, every record at the zone's $TTL.
func NewRandomZone(rng *rand.Rand, origin string) RandomZone {
	return NewRandomZoneOf(rng, origin, Shape{Labels: 3})
}

// Shape is what a drawn zone may hold beyond NewRandomZone's.
type Shape struct {
	// Labels is the most labels a name has, and as many more names as
	// each label more makes room for (20 to 44 names at three labels, 30
	// to 69 at four): deeper trees, whose cases the tests' fixed seeds do
	// not meet.
	Labels int
	// TTLs gives a quarter of the records a TTL of their own, so that
	// sets, their signatures, wildcard and DNAME syntheses and glue carry
	// differing TTLs, and some sets records of differing TTLs.
	TTLs bool
}

// NewRandomZoneOf draws a zone under origin with rng, of shape.
func NewRandomZoneOf(rng *rand.Rand, origin string, shape Shape) RandomZone {
	most := shape.Labels
	origin = dns.Fqdn(origin)
	abs := func(rel string) string { return rel + "." + origin }
	// Draw names, shallow first, so that each one's ancestors are decided
	// before it.
	var drawn [][]string
	for range 20 + 10*(most-3) + rng.IntN(25+15*(most-3)) {
		labels := drawLabels(rng, most)
		if rng.IntN(6) == 0 {
			labels[0] = "*"
		}
		drawn = append(drawn, labels)
	}
	slices.SortStableFunc(drawn, func(a, b []string) int { return len(a) - len(b) })

	kinds := map[string]randomKind{}
	var owners []string // relative, in the order decided
	for _, labels := range drawn {
		rel := strings.Join(labels, ".")
		if _, ok := kinds[rel]; ok {
			continue
		}
		kind, ok := kindData, true
		for i := 1; i < len(labels) && ok; i++ {
			switch kinds[strings.Join(labels[i:], ".")] {
			case kindDNAME:
				ok = false // occluded: nothing below a DNAME
			case kindDelegation, kindGlue:
				kind = kindGlue
			}
		}
		if !ok || (kind == kindGlue && labels[0] == "*") {
			continue
		}
		if kind != kindGlue {
			switch r := rng.IntN(20); {
			case labels[0] == "*" && r < 5:
				kind = kindCNAME
			case labels[0] == "*":
				kind = kindData // no wildcard DNAME or delegation: their meaning is unsettled
			case r < 3:
				kind = kindCNAME
			case r < 5:
				kind = kindDNAME
			case r < 8:
				kind = kindDelegation
			}
		}
		kinds[rel] = kind
		owners = append(owners, rel)
	}

	// Targets: names of the zone, held or not, and names outside it.
	target := func() string {
		switch r := rng.IntN(10); {
		case r < 5 && len(owners) > 0:
			o := owners[rng.IntN(len(owners))]
			if strings.HasPrefix(o, "*") {
				o = "w" + o[1:] // a name the wildcard matches
			}
			return abs(o)
		case r < 8:
			return abs(strings.Join(drawLabels(rng, most), "."))
		default:
			return fmt.Sprintf("%s.example.net.", randomLabels[rng.IntN(len(randomLabels))])
		}
	}

	underDNAME := func(name string) bool {
		for _, o := range owners {
			if kinds[o] == kindDNAME && dns.IsSubDomain(abs(o), name) {
				return true
			}
		}
		return false
	}

	var b strings.Builder
	fmt.Fprintf(&b, "$ORIGIN %s\n$TTL 3600\n", origin)
	fmt.Fprintf(&b, "@ IN SOA ns hostmaster 1 7200 3600 1209600 300\n@ NS ns\nns A 192.0.2.53\n")
	if rng.IntN(2) == 0 {
		fmt.Fprintf(&b, "@ A 192.0.2.1\n@ MX 10 %s\n", target())
	}
	addr := 1
	data := func(rel string) {
		wrote := false
		for !wrote {
			if rng.IntN(2) == 0 {
				fmt.Fprintf(&b, "%s A 192.0.2.%d\n", rel, 1+addr%250)
				addr++
				wrote = true
			}
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "%s AAAA 2001:db8::%x\n", rel, addr)
				addr++
				wrote = true
			}
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "%s TXT \"%s\"\n", rel, rel)
				wrote = true
			}
			if rng.IntN(4) == 0 {
				t := target()
				fmt.Fprintf(&b, "%s MX 10 %s\n", rel, t)
				if rng.IntN(4) == 0 {
					fmt.Fprintf(&b, "%s MX 20 %s\n", rel, t) // one target twice
				}
				wrote = true
			}
			if rng.IntN(6) == 0 {
				fmt.Fprintf(&b, "%s SRV 10 60 5060 %s\n", rel, target())
				wrote = true
			}
			if rng.IntN(8) == 0 {
				// Its target's addresses and SVCB records go in the
				// additional section, and with DO the proof of those
				// it lacks (RFC 9460 section 4.3).
				fmt.Fprintf(&b, "%s SVCB 1 %s alpn=h2\n", rel, target())
				wrote = true
			}
		}
	}
	for _, rel := range owners {
		switch kinds[rel] {
		case kindData:
			data(rel)
		case kindCNAME:
			fmt.Fprintf(&b, "%s CNAME %s\n", rel, target())
		case kindDNAME:
			t := target()
			for underDNAME(t) {
				t = target() // not below a DNAME, its own or another's: no DNAME loops, whose ends servers choose each their own way
			}
			fmt.Fprintf(&b, "%s DNAME %s\n", rel, t)
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "%s A 192.0.2.%d\n", rel, 1+addr%250)
				addr++
			}
		case kindDelegation:
			fmt.Fprintf(&b, "%s NS ns.%s\n", rel, rel)
			fmt.Fprintf(&b, "ns.%s A 192.0.2.%d\n", rel, 1+addr%250)
			addr++
			if rng.IntN(2) == 0 {
				t := target()
				for dns.IsSubDomain(abs(rel), t) {
					t = target() // below the cut a name needs glue, and zonestore refuses a zone without it
				}
				fmt.Fprintf(&b, "%s NS %s\n", rel, t)
			}
			if rng.IntN(3) == 0 {
				fmt.Fprintf(&b, "%s DS 12345 13 2 %064X\n", rel, addr)
			}
		case kindGlue:
			fmt.Fprintf(&b, "%s A 192.0.2.%d\n", rel, 1+addr%250)
			addr++
		}
	}

	// What to ask: every name of two labels or fewer, every owner, and
	// names below and beside them.
	ask := map[string]bool{origin: true, abs("ns"): true, abs("nx"): true}
	for _, x := range randomLabels {
		ask[abs(x)] = true
		for _, y := range randomLabels {
			ask[abs(x+"."+y)] = true
		}
	}
	for _, rel := range owners {
		if strings.HasPrefix(rel, "*") {
			ask[abs(rel)] = true
			rel = "w" + rel[1:]
		}
		ask[abs(rel)] = true
		ask[abs("x."+rel)] = true
		ask[abs("x.y."+rel)] = true
		ask[abs("ns."+rel)] = true
	}
	names := make([]string, 0, len(ask))
	for n := range ask {
		names = append(names, n)
	}
	slices.Sort(names)
	text := b.String()
	if shape.TTLs {
		lines := strings.SplitAfter(text, "\n")
		ttls := []string{"60", "300", "7200", "86400"}
		for i := 5; i < len(lines); i++ { // past the head (RandomZone.Split)
			if owner, rest, ok := strings.Cut(lines[i], " "); ok && rng.IntN(4) == 0 {
				lines[i] = owner + " " + ttls[rng.IntN(len(ttls))] + " " + rest
			}
		}
		text = strings.Join(lines, "")
	}
	return RandomZone{Origin: origin, Text: text, Ask: names}
}

// Split splits z's text into its head (origin, TTL, SOA, the apex NS and
// its address: the five lines NewRandomZone writes first) and its other
// lines, each with its newline: what an edit of the zone may change.
func (z RandomZone) Split() (head string, lines []string) {
	all := strings.SplitAfter(z.Text, "\n")
	return strings.Join(all[:5], ""), slices.DeleteFunc(all[5:], func(l string) bool { return l == "" })
}

// RandomTypes are the types each name of a RandomZone is asked for.
var RandomTypes = []uint16{
	dns.TypeA, dns.TypeAAAA, dns.TypeTXT, dns.TypeMX, dns.TypeSRV, dns.TypeSVCB, dns.TypeNS,
	dns.TypeCNAME, dns.TypeDNAME, dns.TypeDS, dns.TypeSOA, dns.TypeANY,
}

// Queries are the queries asked of z: every name for every type, over UDP
// with EDNS(0) and a 1232-octet buffer, every seventh without EDNS(0) (512
// octets, so some truncate), every fifth in mixed case. With do (a signed
// zone), every one with EDNS(0) has the DO bit, and two in three a
// 4096-octet buffer, room for the signatures and proofs; and the names are
// asked for RRSIG and NSEC too.
func (z RandomZone) Queries(do bool) []Query {
	var qs []Query
	n := 0
	types := RandomTypes
	if do {
		types = append(slices.Clip(types), dns.TypeRRSIG, dns.TypeNSEC)
	}
	for _, name := range z.Ask {
		for _, t := range types {
			q := Query{Name: name, Qtype: t, EDNS: n%7 != 0, Bufsz: 1232}
			if do && q.EDNS {
				q.Do, q.Signed = true, true
				if n%3 != 0 {
					q.Bufsz = 4096
				}
			}
			if n%5 == 4 {
				q.Name = mixCase(name)
			}
			qs = append(qs, q)
			n++
		}
	}
	return qs
}
