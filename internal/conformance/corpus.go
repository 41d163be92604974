// Package conformance holds the query corpus that ontime's answers are
// checked with: against Knot DNS over the network (test/), and through both
// encoders (wire/). The zones are testdata/zones/{example.org,signed.test,
// nsec3.test}.zone.
package conformance

import (
	"fmt"
	"hash/fnv"

	"github.com/miekg/dns"
)

// Names are the names asked in every zone, relative to its origin:
// each answer-algorithm case has its names in the template.
var Names = []string{
	"@", "www", "MixedCase", "mixedcase", "WWW", "nonexistent", "a.nonexistent",
	// CNAME
	"ftp", "chain1", "chain3", "external", "loop1", "loop2", "self", "dangling", "toent", "todeleg", "towild",
	// empty non-terminals
	"b", "a.b", "ent.a.b", "deep.ent.a.b", "nx.deep.ent.a.b", "x.b", "x.y.b", "nx.a.b",
	// wildcards
	"foo.wild", "a.b.wild", "sub.wild", "x.sub.wild", "*.wild", "wild", "x.cwild", "y.x.cwild",
	"y.in.ewild", "in.ewild", "ewild", "x.ewild", "x.x.ewild", "deep.x.ewild",
	// delegations
	"delegated", "ns.delegated", "x.delegated", "a.b.delegated", "outside", "x.outside",
	"sibling", "x.sibling", "secure", "ns.secure", "x.secure", "ent", "under.ent",
	"deep.under.ent", "x.deep.under.ent", "ns.deep.under.ent",
	// DNAME
	"dname", "x.dname", "a.b.dname", "dnamein", "host.dnamein", "nope.dnamein", "host.target", "target",
	// additional-section processing
	"_sip._udp", "_sip._tcp", "mx", "sip", "ns1", "ns2", "mail", "wmx", "wdeleg", "x.wdeleg",
	// types
	"txt", "hinfo", "naptr", "sshfp", "tlsa._443._tcp", "ptr", "svc", "https", "loc",
	// escapes, large RRsets
	`weird\.label`, `\065bc`, "abc", "ABC", `sp\032ace`, "big", "many",
}

var Types = []uint16{
	dns.TypeA, dns.TypeAAAA, dns.TypeMX, dns.TypeTXT, dns.TypeNS, dns.TypeCNAME, dns.TypeDS, dns.TypeANY,
}

// Extra are asked once per zone on top of names × types.
var Extra = []struct {
	Name  string
	Qtype uint16
}{
	{"@", dns.TypeSOA}, {"@", dns.TypeDNSKEY}, {"@", dns.TypeNSEC3PARAM}, {"@", dns.TypeCAA},
	{"@", dns.TypeRRSIG}, {"www", dns.TypeRRSIG}, {"@", dns.TypeNSEC}, {"www", dns.TypeNSEC},
	{"dname", dns.TypeDNAME}, {"dnamein", dns.TypeDNAME}, {"_sip._udp", dns.TypeSRV}, {"ptr", dns.TypePTR},
	{"hinfo", dns.TypeHINFO}, {"naptr", dns.TypeNAPTR}, {"sshfp", dns.TypeSSHFP}, {"tlsa._443._tcp", dns.TypeTLSA},
	{"svc", dns.TypeSVCB}, {"https", dns.TypeHTTPS}, {"loc", dns.TypeLOC}, {"www", 65534},
	{"secure", dns.TypeDS}, {"delegated", dns.TypeDS}, {"x.secure", dns.TypeDS}, {"b", dns.TypeDS},
}

// Query is one corpus entry.
type Query struct {
	Name   string
	Qtype  uint16
	Do     bool
	EDNS   bool
	Bufsz  uint16
	TCP    bool
	Signed bool
}

func (q Query) String() string {
	s := fmt.Sprintf("%s %s", q.Name, dns.TypeToString[q.Qtype])
	if s2, ok := dns.TypeToString[q.Qtype]; !ok || s2 == "" {
		s = fmt.Sprintf("%s TYPE%d", q.Name, q.Qtype)
	}
	if q.EDNS {
		s += fmt.Sprintf(" edns=%d", q.Bufsz)
	}
	if q.Do {
		s += " +do"
	}
	if q.TCP {
		s += " tcp"
	}
	return s
}

// mixCase flips the case of letters by a hash of the name, deterministically.
func mixCase(s string) string {
	h := fnv.New32a()
	h.Write([]byte(s))
	bits := h.Sum32()
	b := []byte(s)
	for i, c := range b {
		if 'a' <= c && c <= 'z' && bits&(1<<(uint(i)%32)) != 0 {
			b[i] = c - 32
		}
	}
	return string(b)
}

// Corpus returns the queries asked of zones (the suite's zones are
// example.org, signed.test and nsec3.test).
func Corpus(zones []string) []Query {
	var qs []Query
	n := 0
	add := func(origin, rel string, qtype uint16, signed bool) {
		name := origin + "."
		if rel != "@" {
			name = rel + "." + origin + "."
		}
		if n%5 == 4 {
			name = mixCase(name)
		}
		q := Query{Name: name, Qtype: qtype, Signed: signed, TCP: n%3 == 2}
		switch n % 4 {
		case 0: // no EDNS: 512-byte UDP limit
		case 1:
			q.EDNS, q.Bufsz = true, 1232
		case 2:
			q.EDNS, q.Bufsz, q.Do = true, 1232, signed
		case 3:
			q.EDNS, q.Bufsz, q.Do = true, 4096, signed
		}
		qs = append(qs, q)
		n++
		if signed && !q.Do {
			// Every name of a signed zone is asked with DO too.
			q2 := q
			q2.EDNS, q2.Bufsz, q2.Do, q2.TCP = true, 4096, true, n%2 == 0
			qs = append(qs, q2)
			n++
		}
	}
	for _, origin := range zones {
		signed := origin != "example.org"
		for _, rel := range Names {
			for _, t := range Types {
				add(origin, rel, t, signed)
			}
		}
		for _, e := range Extra {
			add(origin, e.Name, e.Qtype, signed)
		}
	}
	// The longest name the unsigned zone holds, and truncation at small buffers.
	long := "a123456789012345678901234567890123456789012345678901234567890.b123456789012345678901234567890123456789012345678901234567890.c123456789012345678901234567890123456789012345678901234567890.d123456789012345678901234567890123456789012345678901234.example.org."
	qs = append(qs, Query{Name: long, Qtype: dns.TypeA}, Query{Name: mixCase(long), Qtype: dns.TypeA, TCP: true})
	for _, name := range []string{"big.example.org.", "many.example.org.", "big.signed.test.", "nonexistent.nsec3.test."} {
		for _, bs := range []uint16{512, 1232} {
			qs = append(qs, Query{Name: name, Qtype: dns.TypeANY, EDNS: true, Bufsz: bs, Do: true})
			qs = append(qs, Query{Name: name, Qtype: dns.TypeTXT, EDNS: true, Bufsz: bs, Do: true})
			qs = append(qs, Query{Name: name, Qtype: dns.TypeA, EDNS: true, Bufsz: bs, Do: true})
		}
		qs = append(qs, Query{Name: name, Qtype: dns.TypeTXT}, Query{Name: name, Qtype: dns.TypeA}, Query{Name: name, Qtype: dns.TypeTXT, TCP: true})
	}
	// Outside every zone.
	qs = append(qs, Query{Name: "www.example.com.", Qtype: dns.TypeA}, Query{Name: "org.", Qtype: dns.TypeSOA}, Query{Name: ".", Qtype: dns.TypeNS, TCP: true})
	return qs
}

// Msg is the query as a message.
func (q Query) Msg() *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(q.Name, q.Qtype)
	m.Id = dns.Id()
	if q.EDNS {
		m.SetEdns0(q.Bufsz, q.Do)
	}
	return m
}

// Size is the largest answer the query allows: 65535 over TCP, else its
// EDNS(0) payload size, and 512 without EDNS(0) or below it.
func (q Query) Size() int {
	switch {
	case q.TCP:
		return dns.MaxMsgSize
	case q.EDNS && q.Bufsz > dns.MinMsgSize:
		return int(q.Bufsz)
	}
	return dns.MinMsgSize
}
