package zonestore

import (
	"crypto/sha1"
	"encoding/base32"
	"encoding/binary"
	"encoding/hex"
	"slices"
	"sort"
	"strings"
	"unsafe"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/ahead"
)

// Pre-signed DNSSEC: the zone's own NSEC or NSEC3 records, chosen per answer
// (RFC 4035 section 3.1.3, RFC 5155 section 7.2). Names in the zone have their
// NSEC3 found at build time; only names that do not exist are hashed per query.

// hash returns the NSEC3 hash label of a wire key, uppercase base32hex.
func (z *Zone) hash(k string) string {
	var room [32]byte
	return string(z.appendHash(room[:0], k))
}

// appendHash appends to dst the NSEC3 hash label (RFC 5155 section 5) of
// the name with wire key k: the SHA-1 of the key, which is the name's
// canonical wire form, and the salt, iterated, in uppercase base32hex, as
// dns.HashName computes it from a name's presentation, which it packs
// again; two of a query for a name that does not exist, they were a third
// of its proof's time.
func (z *Zone) appendHash(dst []byte, k string) []byte {
	if z.n3p.Hash != dns.SHA1 || z.n3salt == nil {
		return append(dst, dns.HashName(presentation(strings.Clone(k)), z.n3p.Hash, z.n3p.Iterations, z.n3p.Salt)...) // a copy: k may be on the caller's stack
	}
	var in [maxName + 1 + 255]byte // a name, a salt of 255 octets at most
	sum := sha1.Sum(append(append(in[:0], k...), *z.n3salt...))
	for range z.n3p.Iterations {
		sum = sha1.Sum(append(append(in[:0], sum[:]...), *z.n3salt...))
	}
	return base32.HexEncoding.AppendEncode(dst, sum[:])
}

// saltOf returns p's salt in octets, or nil where it is not hex (HashName
// then hashes to nothing, and so does appendHash).
func saltOf(p *dns.NSEC3PARAM) *[]byte {
	b, err := hex.DecodeString(p.Salt)
	if err != nil {
		return nil
	}
	return &b
}

// prefix8 is the first eight octets of s, big-endian, zero-padded: a
// number that never decreases as strings sort, so that a chain sorted by
// its keys (the NSEC3 records by hash label, the NSEC chain by sort key)
// is searched in a flat array of its keys' prefixes (z.nsec3Prefix,
// z.nsecPrefix) rather than through each entry's pointer and its key's.
func prefix8(s string) uint64 {
	var b [8]byte
	copy(b[:], s)
	return binary.BigEndian.Uint64(b[:])
}

// searchPrefixed returns the first index of a sorted chain at which past
// holds: past(i) says that the chain's key i sorts after the target (or
// at it), and holds from some index on. prefixes are prefix8 of the
// chain's keys, p the target's. Only the keys whose prefix is p, which
// the prefixes do not order, are compared; they are found by galloping
// from the first, near it in the array: they are few, but need not be
// (the names of a zone may share eight octets).
func searchPrefixed(prefixes []uint64, p uint64, past func(i int) bool) int {
	lo, _ := slices.BinarySearch(prefixes, p) // every key before lo sorts before the target
	known, probe := lo, lo                    // every prefix in [lo, known) is p; the one at probe, if any, above it
	for step := 1; probe < len(prefixes) && prefixes[probe] == p; step *= 2 {
		known, probe = probe+1, probe+step
	}
	probe = min(probe, len(prefixes))
	hi := known + sort.Search(probe-known, func(i int) bool { return prefixes[known+i] > p })
	return lo + sort.Search(hi-lo, func(i int) bool { return past(lo + i) })
}

// nsec3At returns the index of the first NSEC3 whose hash label is h or
// sorts after it, len(z.nsec3) where none does.
func (z *Zone) nsec3At(h string) int {
	lo, hi := z.nsec3Buckets.span(h)
	return lo + searchPrefixed(z.nsec3Prefix[lo:hi], prefix8(h), func(i int) bool { return z.nsec3[lo+i].hash >= h })
}

// indexNSEC3 makes the arrays that search z's NSEC3 chain, once it is
// sorted: each label's prefix8 and the chain's hashBuckets.
func (z *Zone) indexNSEC3() {
	z.nsec3Prefix = make([]uint64, len(z.nsec3))
	for i, n := range z.nsec3 {
		z.nsec3Prefix[i] = prefix8(n.hash)
	}
	z.nsec3Buckets = newHashBuckets(len(z.nsec3), func(i int) string { return z.nsec3[i].hash })
}

// findNSEC3 returns the NSEC3 whose owner hash is h, or nil.
func (z *Zone) findNSEC3(h string) *nsec3Node {
	if i := z.nsec3At(h); i < len(z.nsec3) && z.nsec3[i].hash == h {
		return z.nsec3[i]
	}
	return nil
}

// coverNSEC3 returns the NSEC3 whose span covers hash h: the last one before
// it, wrapping round to the last of the chain.
func (z *Zone) coverNSEC3(h string) *nsec3Node {
	i := z.nsec3At(h)
	if i == 0 {
		return z.nsec3[len(z.nsec3)-1]
	}
	return z.nsec3[i-1]
}

// cover returns the NSEC3 that covers the hash of the name with wire key
// k (coverNSEC3), its hash taken on the stack: for a name that does not
// exist, where hash allocated the label it returns, twice a denial.
func (z *Zone) cover(k string) *nsec3Node {
	var room [32]byte
	h := z.appendHash(room[:0], k)
	return z.coverNSEC3(unsafe.String(unsafe.SliceData(h), len(h)))
}

// coverWildcard is cover for the wildcard below the name with wire key k,
// its key made on the stack.
func (z *Zone) coverWildcard(k string) *nsec3Node {
	var room [maxName + 3]byte
	return z.cover(keyOfBytes(append(append(room[:0], 1, '*'), k...)))
}

// wildcardCover3 is coverWildcard for the node n: the apex's, found when
// the version was built, or found now. A flood of new names under the
// apex (a random-subdomain attack) proves each absent with the apex's
// wildcard cover: a hash and a search a query, spared.
func (z *Zone) wildcardCover3(n *node) *nsec3Node {
	if n == z.apex && z.apexWildcard3 != nil {
		return z.apexWildcard3
	}
	return z.coverWildcard(n.key)
}

// wildcardCover is wildcardCover3's for the NSEC chain.
func (z *Zone) wildcardCover(n *node) *node {
	if n == z.apex && z.apexWildcard != nil {
		return z.apexWildcard
	}
	return z.coverNSEC(wildcardKey(n.key))
}

// coverNSEC returns the node whose NSEC covers or matches the name with wire
// key k: the last in canonical order at or before it, wrapping to the last.
func (z *Zone) coverNSEC(k string) *node {
	var buf [2 * (maxName + 1)]byte
	sk := appendSortKey(buf[:0], k)
	i := z.nsecAfter(unsafe.String(unsafe.SliceData(sk), len(sk)))
	if i == 0 {
		return z.nsec[len(z.nsec)-1]
	}
	return z.nsec[i-1]
}

// nsecPrefixOf is prefix8 of a sort key of the zone's after the origin's,
// which starts every one of them.
func (z *Zone) nsecPrefixOf(sk string) uint64 { return prefix8(sk[len(z.nsecOrigin):]) }

// nsecAfter returns the index of the first node of the NSEC chain whose
// sort key sorts after sk, len(z.nsec) where none does.
func (z *Zone) nsecAfter(sk string) int {
	after := func(i int) bool { return z.nsec[i].sortKey > sk }
	if !strings.HasPrefix(sk, z.nsecOrigin) { // no name of the zone's: no prefix to compare
		return sort.Search(len(z.nsec), after)
	}
	return searchPrefixed(z.nsecPrefix, z.nsecPrefixOf(sk), after)
}

// proof collects the NSEC and NSEC3 records of one answer, each once.
type proof struct {
	z      *Zone
	rrs    []dns.RR
	seen   []any
	warmed *ahead.Note // the query's warming, where it was warmed (AnswerWarmed)
}

// cover is z.cover(k), or the record the query's warming found for k.
func (p *proof) cover(k string) *nsec3Node {
	if n3 := p.z.warmedCover(p.warmed, k); n3 != nil {
		return n3
	}
	return p.z.cover(k)
}

func (p *proof) addNSEC(n *node) {
	if n == nil || p.has(n) {
		return
	}
	if s := n.get(dns.TypeNSEC); s != nil {
		p.seen = append(p.seen, n)
		p.rrs = append(p.rrs, s.rrs...)
		p.rrs = append(p.rrs, s.sigs...)
	}
}

func (p *proof) addNSEC3(n *nsec3Node) {
	if n == nil || p.has(n) {
		return
	}
	p.seen = append(p.seen, n)
	p.rrs = append(p.rrs, n.rr)
	p.rrs = append(p.rrs, n.sigs...)
}

func (p *proof) has(x any) bool {
	for _, s := range p.seen {
		if s == x {
			return true
		}
	}
	return false
}

// closestProvable walks up from n to the nearest name that has an NSEC3 (with
// opt-out, names only above insecure delegations may have none), and returns
// it and its NSEC3, with the key of its child on the way to k: the next closer name.
func (z *Zone) closestProvable(n *node, k string) (*node, *nsec3Node, string) {
	n3 := z.findNSEC3(n.nsec3Hash)
	for n3 == nil && n != z.apex {
		n = z.named(parentKey(n.key))
		n3 = z.findNSEC3(n.nsec3Hash)
	}
	next := k
	for p := k; len(p) > len(n.key); p = parentKey(p) {
		next = p
	}
	return n, n3, next
}

// denyName proves that the name k does not exist, below its closest encloser
// ce: RFC 4035 section 3.1.3.2 (NSEC) or RFC 5155 section 7.2.2 (NSEC3).
// withWildcard adds the proof that no wildcard could have matched it.
func (p *proof) denyName(k string, ce *node, withWildcard bool) {
	z := p.z
	if z.nsec3 != nil {
		cpe, n3, next := z.closestProvable(ce, k)
		p.addNSEC3(n3)
		p.addNSEC3(p.cover(next))
		if withWildcard {
			p.addNSEC3(z.wildcardCover3(cpe))
		}
		return
	}
	if len(z.nsec) == 0 {
		return
	}
	p.addNSEC(z.coverNSEC(k))
	if withWildcard {
		p.addNSEC(z.wildcardCover(ce))
	}
}

// expansion proves, for a wildcard answer, that the query name itself does
// not exist (RFC 4035 section 3.1.3.3, RFC 5155 section 7.2.6).
func (p *proof) expansion(k string, ce *node) {
	z := p.z
	if z.nsec3 != nil {
		_, _, next := z.closestProvable(ce, k)
		p.addNSEC3(p.cover(next))
		return
	}
	if len(z.nsec) > 0 {
		p.addNSEC(z.coverNSEC(k))
	}
}

// noData proves that the name n has no records of the asked type: its own
// NSEC or NSEC3 bitmap (RFC 4035 section 3.1.3.1, RFC 5155 section 7.2.3),
// or, where opt-out left it without an NSEC3, the closest provable encloser
// (RFC 5155 section 7.2.4).
func (p *proof) noData(n *node) {
	z := p.z
	if z.nsec3 != nil {
		if n3 := z.findNSEC3(n.nsec3Hash); n3 != nil {
			p.addNSEC3(n3)
			return
		}
		_, n3, next := z.closestProvable(n, n.key)
		p.addNSEC3(n3)
		p.addNSEC3(p.cover(next))
		return
	}
	if n.get(dns.TypeNSEC) != nil {
		p.addNSEC(n)
	} else if len(z.nsec) > 0 {
		p.addNSEC(z.coverNSEC(n.key)) // an empty non-terminal has none of its own
	}
}

// wildcardKey returns the key of "*." + the name with key k.
func wildcardKey(k string) string { return "\x01*" + k }
