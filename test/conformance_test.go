package test

import (
	"fmt"
	"hash/fnv"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// The conformance suite: Knot DNS and ontime serve the same zone files in
// testdata/zones/, and every query of the corpus goes to both. Rcode, flags,
// answer and authority must match Knot's; the additional section too, except
// where the policy below (additionalPolicy) says why it may differ.

// conformanceZones are the zones of the suite: one unsigned, one signed with
// NSEC, one with NSEC3 and opt-out, all from testdata/zones/example.org.tmpl.
func conformanceZones(t testing.TB) []zoneFile {
	root := repoRoot(t)
	var zs []zoneFile
	for _, o := range []string{"example.org", "signed.test", "nsec3.test"} {
		zs = append(zs, zoneFile{origin: o, path: filepath.Join(root, "testdata", "zones", o+".zone")})
	}
	return zs
}

// corpusNames are the names asked in every zone, relative to its origin:
// each answer-algorithm case has its names in the template.
var corpusNames = []string{
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
	"_sip._udp", "_sip._tcp", "mx", "sip", "ns1", "ns2", "mail",
	// types
	"txt", "hinfo", "naptr", "sshfp", "tlsa._443._tcp", "ptr", "svc", "https", "loc",
	// escapes, large RRsets
	`weird\.label`, `\065bc`, "abc", "ABC", `sp\032ace`, "big", "many",
}

var corpusTypes = []uint16{
	dns.TypeA, dns.TypeAAAA, dns.TypeMX, dns.TypeTXT, dns.TypeNS, dns.TypeCNAME, dns.TypeDS, dns.TypeANY,
}

// extraQueries are asked once per zone on top of names × types.
var extraQueries = []struct {
	name  string
	qtype uint16
}{
	{"@", dns.TypeSOA}, {"@", dns.TypeDNSKEY}, {"@", dns.TypeNSEC3PARAM}, {"@", dns.TypeCAA},
	{"@", dns.TypeRRSIG}, {"www", dns.TypeRRSIG}, {"@", dns.TypeNSEC}, {"www", dns.TypeNSEC},
	{"dname", dns.TypeDNAME}, {"dnamein", dns.TypeDNAME}, {"_sip._udp", dns.TypeSRV}, {"ptr", dns.TypePTR},
	{"hinfo", dns.TypeHINFO}, {"naptr", dns.TypeNAPTR}, {"sshfp", dns.TypeSSHFP}, {"tlsa._443._tcp", dns.TypeTLSA},
	{"svc", dns.TypeSVCB}, {"https", dns.TypeHTTPS}, {"loc", dns.TypeLOC}, {"www", 65534},
	{"secure", dns.TypeDS}, {"delegated", dns.TypeDS}, {"x.secure", dns.TypeDS}, {"b", dns.TypeDS},
}

// query is one corpus entry.
type query struct {
	name   string
	qtype  uint16
	do     bool
	edns   bool
	bufsz  uint16
	tcp    bool
	signed bool
}

func (q query) String() string {
	s := fmt.Sprintf("%s %s", q.name, dns.TypeToString[q.qtype])
	if s2, ok := dns.TypeToString[q.qtype]; !ok || s2 == "" {
		s = fmt.Sprintf("%s TYPE%d", q.name, q.qtype)
	}
	if q.edns {
		s += fmt.Sprintf(" edns=%d", q.bufsz)
	}
	if q.do {
		s += " +do"
	}
	if q.tcp {
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

func corpus(zones []zoneFile) []query {
	var qs []query
	n := 0
	add := func(origin, rel string, qtype uint16, signed bool) {
		name := origin + "."
		if rel != "@" {
			name = rel + "." + origin + "."
		}
		if n%5 == 4 {
			name = mixCase(name)
		}
		q := query{name: name, qtype: qtype, signed: signed, tcp: n%3 == 2}
		switch n % 4 {
		case 0: // no EDNS: 512-byte UDP limit
		case 1:
			q.edns, q.bufsz = true, 1232
		case 2:
			q.edns, q.bufsz, q.do = true, 1232, signed
		case 3:
			q.edns, q.bufsz, q.do = true, 4096, signed
		}
		qs = append(qs, q)
		n++
		if signed && !q.do {
			// Every name of a signed zone is asked with DO too.
			q2 := q
			q2.edns, q2.bufsz, q2.do, q2.tcp = true, 4096, true, n%2 == 0
			qs = append(qs, q2)
			n++
		}
	}
	for _, z := range zones {
		signed := z.origin != "example.org"
		for _, rel := range corpusNames {
			for _, t := range corpusTypes {
				add(z.origin, rel, t, signed)
			}
		}
		for _, e := range extraQueries {
			add(z.origin, e.name, e.qtype, signed)
		}
	}
	// The longest name the unsigned zone holds, and truncation at small buffers.
	long := "a123456789012345678901234567890123456789012345678901234567890.b123456789012345678901234567890123456789012345678901234567890.c123456789012345678901234567890123456789012345678901234567890.d123456789012345678901234567890123456789012345678901234.example.org."
	qs = append(qs, query{name: long, qtype: dns.TypeA}, query{name: mixCase(long), qtype: dns.TypeA, tcp: true})
	for _, name := range []string{"big.example.org.", "many.example.org.", "big.signed.test.", "nonexistent.nsec3.test."} {
		for _, bs := range []uint16{512, 1232} {
			qs = append(qs, query{name: name, qtype: dns.TypeANY, edns: true, bufsz: bs, do: true})
			qs = append(qs, query{name: name, qtype: dns.TypeTXT, edns: true, bufsz: bs, do: true})
			qs = append(qs, query{name: name, qtype: dns.TypeA, edns: true, bufsz: bs, do: true})
		}
		qs = append(qs, query{name: name, qtype: dns.TypeTXT}, query{name: name, qtype: dns.TypeA}, query{name: name, qtype: dns.TypeTXT, tcp: true})
	}
	// Outside every zone.
	qs = append(qs, query{name: "www.example.com.", qtype: dns.TypeA}, query{name: "org.", qtype: dns.TypeSOA}, query{name: ".", qtype: dns.TypeNS, tcp: true})
	return qs
}

func (q query) msg() *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(q.name, q.qtype)
	m.Id = dns.Id()
	if q.edns {
		m.SetEdns0(q.bufsz, q.do)
	}
	return m
}

// section renders a section as a sorted list of lowercase RR strings:
// owner names compare case-insensitively (the case of answer owners is
// checked apart), RRsets compare as sets.
func section(rrs []dns.RR) []string {
	out := make([]string, 0, len(rrs))
	for _, rr := range rrs {
		if rr.Header().Rrtype == dns.TypeOPT {
			continue
		}
		out = append(out, strings.ToLower(rr.String()))
	}
	sort.Strings(out)
	return out
}

func flags(m *dns.Msg) string {
	var f []string
	for _, x := range []struct {
		on   bool
		name string
	}{{m.Response, "qr"}, {m.Authoritative, "aa"}, {m.Truncated, "tc"}, {m.RecursionDesired, "rd"},
		{m.RecursionAvailable, "ra"}, {m.AuthenticatedData, "ad"}, {m.CheckingDisabled, "cd"}} {
		if x.on {
			f = append(f, x.name)
		}
	}
	return strings.Join(f, " ")
}

// additionalPolicy says where ontime's additional section may differ from
// Knot's, and why. It returns "" where they must be equal.
func additionalPolicy(q query, knot, ours *dns.Msg) string {
	if knot.Truncated && ours.Truncated {
		return "truncated: RFC 2181 section 9 has the client discard it and retry over TCP"
	}
	return ""
}

// answerPolicy is the same for the answer and authority sections: only a
// truncated message, which the client must discard, may differ.
func answerPolicy(q query, knot, ours *dns.Msg) string {
	if knot.Truncated && ours.Truncated {
		return "truncated: RFC 2181 section 9 has the client discard it and retry over TCP"
	}
	return ""
}

// diff compares ontime's answer with Knot's and returns what differs.
func diff(q query, knot, ours *dns.Msg) []string {
	var d []string
	if knot.Rcode != ours.Rcode {
		d = append(d, fmt.Sprintf("rcode: knot %s, ontime %s", dns.RcodeToString[knot.Rcode], dns.RcodeToString[ours.Rcode]))
	}
	if flags(knot) != flags(ours) {
		d = append(d, fmt.Sprintf("flags: knot [%s], ontime [%s]", flags(knot), flags(ours)))
	}
	if len(ours.Question) != 1 || ours.Question[0].Name != presentationOf(q.name) {
		d = append(d, fmt.Sprintf("question: %v", ours.Question))
	}
	if answerPolicy(q, knot, ours) == "" {
		for _, s := range []struct {
			name       string
			knot, ours []dns.RR
		}{{"answer", knot.Answer, ours.Answer}, {"authority", knot.Ns, ours.Ns}} {
			if k, o := section(s.knot), section(s.ours); !slices.Equal(k, o) {
				d = append(d, fmt.Sprintf("%s:\n  knot:   %s\n  ontime: %s", s.name, strings.Join(k, "\n          "), strings.Join(o, "\n          ")))
			}
		}
		// The question's case is kept in the owners of the answers for it.
		for _, rr := range ours.Answer {
			if strings.EqualFold(rr.Header().Name, q.name) && rr.Header().Name != q.name {
				d = append(d, fmt.Sprintf("answer owner %q does not keep the question's case %q", rr.Header().Name, q.name))
			}
		}
	}
	if additionalPolicy(q, knot, ours) == "" {
		if k, o := section(knot.Extra), section(ours.Extra); !slices.Equal(k, o) {
			d = append(d, fmt.Sprintf("additional:\n  knot:   %s\n  ontime: %s", strings.Join(k, "\n          "), strings.Join(o, "\n          ")))
		}
	}
	if (knot.IsEdns0() == nil) != (ours.IsEdns0() == nil) {
		d = append(d, fmt.Sprintf("OPT record: knot %v, ontime %v", knot.IsEdns0() != nil, ours.IsEdns0() != nil))
	}
	return d
}

func TestConformanceWithKnot(t *testing.T) {
	zones := conformanceZones(t)
	knot := startKnot(t, zones)
	var body strings.Builder
	origins := make([]string, 0, len(zones))
	for _, z := range zones {
		fmt.Fprintf(&body, "    zonestore %s %s\n", z.path, z.origin)
		origins = append(origins, z.origin)
	}
	ours := startCoreDNS(t, body.String(), origins...)

	qs := corpus(zones)
	if len(qs) < 500 {
		t.Fatalf("corpus has %d queries, want several hundred", len(qs))
	}
	failed, excused := 0, 0
	for _, q := range qs {
		k, err := exchange(t, knot.addr, q.msg(), q.tcp)
		if err != nil {
			t.Fatalf("knot %s: %v", q, err)
		}
		o, err := exchange(t, ours.addr, q.msg(), q.tcp)
		if err != nil {
			t.Errorf("ontime %s: %v", q, err)
			failed++
			continue
		}
		if answerPolicy(q, k, o) != "" || additionalPolicy(q, k, o) != "" {
			excused++
		}
		if d := diff(q, k, o); len(d) > 0 {
			failed++
			t.Errorf("%s:\n%s", q, strings.Join(d, "\n"))
		}
	}
	t.Logf("%d queries, %d differ from Knot, %d compared under a written policy", len(qs), failed, excused)
}

// presentationOf returns a name as miekg/dns prints it after a round trip
// through the wire, so that \065 and A, or \032 and "\ ", compare equal.
func presentationOf(name string) string {
	buf := make([]byte, 256)
	n, err := dns.PackDomainName(name, buf, 0, nil, false)
	if err != nil {
		return name
	}
	s, _, err := dns.UnpackDomainName(buf[:n], 0)
	if err != nil {
		return name
	}
	return s
}
