package zonestore

import (
	"unsafe"

	"github.com/miekg/dns"
)

// An NSEC3 record and its signature are what a denial of a random name
// reads cold: under a flood of names that do not exist (a random-subdomain
// attack) each query proves its name absent with another of the zone's
// NSEC3 records. As miekg/dns's parser leaves them, one record is about
// nine objects apart in the heap (the record, its owner, next hash and
// bitmap, the slice of signatures, the RRSIG, its owner and its signature),
// each a cache miss for the proof, then for Msg.Len and the encoder.
//
// nsec3Home moves a node, its record and its one signature into a single
// allocation, their strings into its tail: a denial reads a few lines in
// a row (bench/README.md, 2026-12-06: the NSEC3 flood 1.09x the queries
// a second). Nothing about the records changes but where they are: they
// are copies, their strings equal, and no one writes them.
type nsec3Home struct {
	nsec3Parts
	text [nsec3Text]byte
}

// nsec3Text is the room for the hash label, the owner, the next hash and
// the signature: an ECDSA or Ed25519 signature (88 octets of base64) with
// an owner of up to 88 octets, for a home of 512 octets, a size class of
// its own. Longer text (an RSA signature) and the parts are then two
// allocations.
const nsec3Text = 512 - int(unsafe.Sizeof(nsec3Parts{}))

type nsec3Parts struct {
	node nsec3Node
	rr   dns.NSEC3
	sig  dns.RRSIG
	sigs [1]dns.RR
	bits [8]uint16 // the bitmap, where it has 8 types or fewer
}

// homeNSEC3 returns a copy of n in an nsec3Home, or n itself where it has
// no record or not exactly one signature (two, say, while a key rolls).
// origin and salt, the zone's, are shared where the records' are equal.
func homeNSEC3(n *nsec3Node, origin, salt string) *nsec3Node {
	if n.rr == nil || len(n.sigs) != 1 {
		return n
	}
	sig, ok := n.sigs[0].(*dns.RRSIG)
	if !ok {
		return n
	}
	need := len(n.hash) + len(n.rr.Hdr.Name) + len(n.rr.NextDomain) + len(sig.Signature)
	var p *nsec3Parts
	var text []byte
	if need <= nsec3Text {
		h := new(nsec3Home)
		p, text = &h.nsec3Parts, h.text[:0:need]
	} else {
		p, text = new(nsec3Parts), make([]byte, 0, need)
	}
	// keep appends s to text and returns the copy: text never grows past
	// need, so no append moves what an earlier string points at.
	keep := func(s string) string {
		if s == "" {
			return ""
		}
		i := len(text)
		text = append(text, s...)
		return unsafe.String(&text[i], len(s))
	}
	p.rr, p.sig = *n.rr, *sig
	p.node.hash = keep(n.hash)
	p.rr.Hdr.Name = keep(n.rr.Hdr.Name)
	p.rr.NextDomain = keep(n.rr.NextDomain)
	p.sig.Signature = keep(sig.Signature)
	if sig.Hdr.Name == n.rr.Hdr.Name {
		p.sig.Hdr.Name = p.rr.Hdr.Name
	}
	// The strings every record of the zone shares, shared.
	if n.rr.Salt == salt {
		p.rr.Salt = salt
	}
	if sig.SignerName == origin {
		p.sig.SignerName = origin
	}
	if bits := n.rr.TypeBitMap; len(bits) <= len(p.bits) {
		p.rr.TypeBitMap = p.bits[:len(bits):len(bits)]
		copy(p.rr.TypeBitMap, bits)
	}
	p.sigs[0] = &p.sig
	p.node.rr = &p.rr
	p.node.sigs = p.sigs[:]
	return &p.node
}
