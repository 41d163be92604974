package wire

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestNegativeTemplateIsTheLongWay packs negative answers (a question and
// a zone's SOA) with one encoder, which keeps each SOA's template, and
// each again with a fresh encoder, which packs it the long way: the
// octets must be the same. The SOAs' names are related to their owners in
// each way a pointer can be (below it, above it, beside it, one pointing
// into another, in another case, no relation at all); the questions are
// the owner itself, names under it in any case and at any depth, the
// SOA's own names and names under them, names that share the label above
// the owner with one of them, names with escapes, names outside the zone,
// a name whose text ends in the owner's octets across a label's length,
// and names too long for a 512-octet answer. More SOAs than the encoder
// has slots take turns, so templates are replaced. Most of the answers
// must have come from a template.
func TestNegativeTemplateIsTheLongWay(t *testing.T) {
	long := strings.Repeat("a", 51) // 51 octets: its length octet reads as '3'
	soas := rrs(
		"example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300",
		"example.net. 3600 IN SOA ns.dns.example.net. host.dns.example.net. 1 7200 3600 1209600 300",
		"example.com. 3600 IN SOA a.example.net. b.example.net. 1 7200 3600 1209600 300",
		"Example.EDU. 3600 IN SOA NS1.example.edu. hostmaster.EXAMPLE.edu. 1 7200 3600 1209600 300",
		"sub.example.org. 3600 IN SOA ns1.example.org. hostmaster.sub.example.org. 1 7200 3600 1209600 300",
		"b.c.d.e.example. 3600 IN SOA ns.c.d.e.example. h.e.example. 1 7200 3600 1209600 300",
		"bench. 3600 IN SOA ns.bench. h.ns.bench. 1 7200 3600 1209600 300",
		"x.y. 3600 IN SOA y. x.y. 1 7200 3600 1209600 300",
		". 86400 IN SOA a.root-servers.net. nstld.verisign-grs.com. 1 1800 900 604800 86400",
		long+".org. 3600 IN SOA ns."+long+".org. h.org. 1 7200 3600 1209600 300",
		"example.org. 60 IN SOA ns1.example.org. hostmaster.example.org. 2 7200 3600 1209600 300",
	)
	r := rand.New(rand.NewPCG(1, 2))
	label := func() string { return randomLabel(r) }
	questions := func(soa *dns.SOA) []string {
		owner := soa.Hdr.Name
		under := func(name string) string {
			if name == "." {
				return label() + "."
			}
			return label() + "." + name
		}
		qs := []string{owner, strings.ToUpper(owner), soa.Ns, soa.Mbox, strings.ToUpper(soa.Ns),
			under(soa.Ns), under(soa.Mbox), under(under(soa.Ns)), "www.example.info.", `a\.b.` + owner,
			"x3" + long + ".org.", "3" + long + ".org.", under("x3" + long + ".org."), strings.Repeat("abcdefghi.", 24) + "org."}
		for i := 0; i < 40; i++ {
			q := under(owner)
			for d := r.IntN(3); d > 0; d-- {
				q = under(q)
			}
			qs = append(qs, q)
		}
		// Names sharing the label above the owner with the SOA's names,
		// and the labels above those.
		for _, n := range []string{soa.Ns, soa.Mbox} {
			if l := dns.SplitDomainName(n); len(l) > 1 {
				qs = append(qs, under(strings.Join(l[1:], ".")+"."), strings.Join(l[1:], ".")+".")
			}
		}
		return qs
	}
	type ask struct {
		soa  *dns.SOA
		name string
	}
	var asks []ask
	for _, rr := range soas {
		soa := rr.(*dns.SOA)
		for _, q := range questions(soa) {
			if _, ok := dns.IsDomainName(q); ok {
				asks = append(asks, ask{soa, q})
			}
		}
	}
	e := NewEncoder()
	buf := make([]byte, 0, 4096)
	templated, grouped := 0, 0
	for round := 0; round < 4; round++ {
		// In the first two rounds each zone's questions come together,
		// the zones in turn; then all of them in any order, so that the
		// zones' templates take one another's slots between questions.
		r.Shuffle(len(asks), func(i, j int) { asks[i], asks[j] = asks[j], asks[i] })
		if round < 2 {
			order := r.Perm(len(soas))
			slices.SortStableFunc(asks, func(a, b ask) int {
				return order[slices.Index(soas, dns.RR(a.soa))] - order[slices.Index(soas, dns.RR(b.soa))]
			})
		}
		for i, a := range asks {
			m := withReply(a.name, dns.TypeA, nil, []dns.RR{a.soa}, nil)
			m.Rcode = dns.RcodeNameError
			size := 1232
			switch i % 3 {
			case 0:
				m.SetEdns0(1232, false)
			case 1:
				size = 512
			default:
				m.Rcode, m.Question[0].Qtype = dns.RcodeSuccess, dns.TypeTXT
				m.SetEdns0(512, false)
				size = 512
			}
			before := e.negHits
			var err error
			buf, err = e.Encode(buf, m, size)
			want, werr := NewEncoder().Encode(nil, m, size)
			if (err == nil) != (werr == nil) || !bytes.Equal(buf, want) {
				t.Fatalf("%s with %s at %d: %v\n got %x\nwant %x (%v)", a.name, a.soa.Hdr.Name, size, err, buf, want, werr)
			}
			if err == nil {
				if err := countedAsMsgLen(e, m, buf); err != nil {
					t.Fatalf("%s with %s at %d: %v", a.name, a.soa.Hdr.Name, size, err)
				}
			}
			if round < 2 {
				grouped += e.negHits - before
			}
			templated += e.negHits - before
		}
	}
	// A zone's questions asked together are answered from its template
	// but for the first, those it does not hold, and the root zone's.
	if total := 2 * len(asks); grouped < total/2 {
		t.Errorf("%d of %d answers asked zone by zone from a template", grouped, total)
	}
	t.Logf("%d of %d answers from a template", templated, 4*len(asks))
}

// TestNegativeTemplateIsForItsShapeAlone: a message with more than the
// SOA (an answer, a second authority record, an additional record) is
// packed the long way, and keeps no template.
func TestNegativeTemplateIsForItsShapeAlone(t *testing.T) {
	soa := rrs("example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300")
	other := rrs("www.example.org. 300 IN A 192.0.2.1")
	e := NewEncoder()
	for i, m := range []*dns.Msg{
		withReply("x.example.org.", dns.TypeA, other, soa, nil),
		withReply("x.example.org.", dns.TypeA, nil, append(other, soa...), nil),
		withReply("x.example.org.", dns.TypeA, nil, soa, other),
	} {
		for k := 0; k < 2; k++ {
			got, err := e.Encode(nil, m, 1232)
			want, _ := NewEncoder().Encode(nil, m, 1232)
			if err != nil || !bytes.Equal(got, want) {
				t.Fatalf("message %d: %v\n got %x\nwant %x", i, err, got, want)
			}
		}
		if e.negHits != 0 {
			t.Fatalf("message %d: packed from a template", i)
		}
	}
}

// TestSignedNegativeTemplateIsTheLongWay is TestNegativeTemplateIsTheLongWay
// for the denials of signed zones: sections of the SOA and its signature,
// then one or two NSEC records, each with its signature, as zonestore
// hands them for a query with DO; an NSEC3 zone's denials are packed the
// long way, never from a template. The NSEC
// records' owners and next names lie under the owner at several depths,
// above it (a next name wrapping to the apex) and beside the question;
// the questions are names under the owner, the records' own names and
// names under those, names sharing the label above the owner with one of
// them, the owner itself, in any case, with escapes, and too long for
// 512 octets. Each section is asked in runs, as a flood asks names that
// fall between the same two records, and the runs of all sections in
// turn; most answers must come from a template.
func TestSignedNegativeTemplateIsTheLongWay(t *testing.T) {
	const sig = " 13 3 300 " + exampleSignature
	soa := rrs("example.org. 300 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300",
		"example.org. 300 IN RRSIG SOA"+sig)
	nsec := func(owner, next, types string) []dns.RR {
		return rrs(owner+" 300 IN NSEC "+next+" "+types, owner+" 300 IN RRSIG NSEC"+sig)
	}
	nsec3 := func(hash, next string) []dns.RR {
		return rrs(hash+".example.org. 300 IN NSEC3 1 0 0 - "+next+" A RRSIG", hash+".example.org. 300 IN RRSIG NSEC3"+sig)
	}
	apex := nsec("example.org.", "a.example.org.", "NS SOA RRSIG NSEC DNSKEY")
	sections := [][]dns.RR{
		cat(soa, apex),
		cat(soa, nsec("host1.example.org.", "host2.example.org.", "A RRSIG NSEC"), apex),
		cat(soa, nsec("leaf.ent9.example.org.", "www.example.org.", "A RRSIG NSEC"), apex),
		cat(soa, nsec("Deep.B.c.example.org.", "ns1.example.org.", "A RRSIG NSEC")),
		cat(soa, nsec("zz.example.org.", "example.org.", "TXT RRSIG NSEC"), apex),
		cat(soa, nsec("hostmaster.example.org.", "x.hostmaster.example.org.", "A RRSIG NSEC"), apex),
		cat(soa, nsec3("0p9mhaveqvm6t7vbl5lop2u3t2rp3tom", "0p9mhaveqvm6t7vbl5lop2u3t2rp3ton"),
			nsec3("35mthgpgcu1qg68fab165klnsnk3dpvl", "35mthgpgcu1qg68fab165klnsnk3dpvm"),
			nsec3("b4um86eghhds6nea196smvmlo4ors995", "b4um86eghhds6nea196smvmlo4ors996")),
		cat(soa, nsec3("0p9mhaveqvm6t7vbl5lop2u3t2rp3tom", "0p9mhaveqvm6t7vbl5lop2u3t2rp3ton")),
	}
	r := rand.New(rand.NewPCG(3, 4))
	label := func() string { return randomLabel(r) }
	questions := func(sec []dns.RR) []string {
		qs := []string{"example.org.", "EXAMPLE.org.", `a\.b.example.org.`, strings.Repeat("abcdefghi.", 24) + "example.org."}
		for _, rr := range sec {
			names := []string{rr.Header().Name}
			switch rr := rr.(type) {
			case *dns.SOA:
				names = append(names, rr.Ns, rr.Mbox)
			case *dns.NSEC:
				names = append(names, rr.NextDomain)
			}
			for _, n := range names {
				qs = append(qs, n, strings.ToUpper(n), label()+"."+n)
				if l := dns.SplitDomainName(n); len(l) > 2 {
					qs = append(qs, label()+"."+strings.Join(l[len(l)-3:], ".")+".")
				}
			}
		}
		for i := 0; i < 30; i++ {
			q := label() + ".example.org."
			for d := r.IntN(3); d > 0; d-- {
				q = label() + "." + q
			}
			qs = append(qs, q)
		}
		return qs
	}
	e := NewEncoder()
	buf := make([]byte, 0, 4096)
	templated, total := 0, 0
	for round := 0; round < 3; round++ {
		for _, si := range r.Perm(len(sections)) {
			sec := sections[si]
			qs := questions(sec)
			r.Shuffle(len(qs), func(i, j int) { qs[i], qs[j] = qs[j], qs[i] })
			for i, q := range qs {
				if _, ok := dns.IsDomainName(q); !ok {
					continue
				}
				m := withReply(q, dns.TypeA, nil, sec, nil)
				m.Rcode = dns.RcodeNameError
				size := 1232
				if i%4 == 3 {
					size = 512
					m.Rcode, m.Question[0].Qtype = dns.RcodeSuccess, dns.TypeTXT
				}
				m.SetEdns0(uint16(size), true)
				before := e.negHits
				var err error
				buf, err = e.Encode(buf, m, size)
				want, werr := NewEncoder().Encode(nil, m, size)
				if (err == nil) != (werr == nil) || !bytes.Equal(buf, want) {
					t.Fatalf("%s with section %d at %d: %v\n got %x\nwant %x (%v)", q, si, size, err, buf, want, werr)
				}
				if err == nil {
					if err := countedAsMsgLen(e, m, buf); err != nil {
						t.Fatalf("%s with section %d at %d: %v", q, si, size, err)
					}
				}
				if _, n3 := sec[2].(*dns.NSEC3); n3 && e.negHits > before {
					t.Fatalf("%s with section %d: an NSEC3 zone's denial from a template", q, si)
				}
				templated += e.negHits - before
				total++
			}
		}
	}
	if templated < total/2 {
		t.Errorf("%d of %d answers from a template", templated, total)
	}
	t.Logf("%d of %d answers from a template", templated, total)
}

// TestNegativeTemplateKeptWhenPackedTwice: a section packed the long way
// once is not kept (a flood of names an NSEC3 zone lacks packs each
// denial's section about once); the second time in a row, it is, and the
// third answer comes from it. Another section in the slot between the two
// packings makes the count start again.
func TestNegativeTemplateKeptWhenPackedTwice(t *testing.T) {
	soa := rrs("example.org. 300 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300")
	ask := func(e *Encoder, sec []dns.RR, q string) bool {
		m := withReply(q, dns.TypeA, nil, sec, nil)
		m.Rcode = dns.RcodeNameError
		before := e.negHits
		if _, err := e.Encode(nil, m, 1232); err != nil {
			t.Fatal(err)
		}
		return e.negHits > before
	}
	e := NewEncoder()
	if ask(e, soa, "a.example.org.") || ask(e, soa, "b.example.org.") || !ask(e, soa, "c.example.org.") {
		t.Fatal("want the third answer, and only it, from the template")
	}
	// Sections that share a slot: the same SOA with other records after it.
	sec := func(i int) []dns.RR {
		return append(append([]dns.RR{}, soa...), rrs(fmt.Sprintf("h%d.example.org. 300 IN NSEC h%d.example.org. A", i, i+1))...)
	}
	slot := func(sec []dns.RR) uint64 {
		_, k := negativeSection(withReply("x.example.org.", dns.TypeA, nil, sec, nil), nil)
		return k >> (64 - negativeBits)
	}
	e = NewEncoder()
	a := sec(0)
	var b []dns.RR
	for i := 1; b == nil; i++ {
		if s := sec(i); slot(s) == slot(a) {
			b = s
		}
	}
	if ask(e, a, "a.example.org.") || ask(e, b, "b.example.org.") || ask(e, a, "c.example.org.") || ask(e, a, "d.example.org.") || !ask(e, a, "e.example.org.") {
		t.Fatal("want a section kept the second time in a row its slot packs it")
	}
}

// exampleSignature is the fields of an RRSIG record of example.org.'s
// from its expiration on (inception, key tag, signer, signature), for the
// signed records of the tests, which the encoder packs but never checks.
const exampleSignature = "20270105203847 20261206203847 27474 example.org. cRBApZFNkuSwqVrAo8IE720DTOp8BNlC5p6QohD7tilwJmxycOQdEtGktUXC3imbhoLu6i3xGcBONJGkSnl6nw=="

// randomLabel is a label of 1 to 12 letters (of either case), digits and
// hyphens.
func randomLabel(r *rand.Rand) string {
	const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-"
	b := make([]byte, 1+r.IntN(12))
	for i := range b {
		b[i] = letters[r.IntN(len(letters))]
	}
	return string(b)
}

// cat returns the records of sets, in order, in a new slice.
func cat(sets ...[]dns.RR) []dns.RR {
	var out []dns.RR
	for _, s := range sets {
		out = append(out, s...)
	}
	return out
}
