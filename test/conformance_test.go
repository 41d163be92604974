package test

import (
	"bytes"
	"fmt"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/conformance"
	"github.com/ontimedns/ontime/internal/freeport"
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

// zonestoreLines are the Corefile lines that serve zones with zonestore,
// each with block after its arguments ("": none), and the zones' origins.
func zonestoreLines(zones []zoneFile, block string) (string, []string) {
	var b strings.Builder
	origins := make([]string, 0, len(zones))
	for _, z := range zones {
		fmt.Fprintf(&b, "    zonestore %s %s%s\n", z.path, z.origin, block)
		origins = append(origins, z.origin)
	}
	return b.String(), origins
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
func additionalPolicy(q conformance.Query, knot, ours *dns.Msg) string {
	if knot.Truncated && ours.Truncated {
		return "truncated: RFC 2181 section 9 has the client discard it and retry over TCP"
	}
	return ""
}

// answerPolicy is the same for the answer and authority sections: only a
// truncated message, which the client must discard, may differ.
func answerPolicy(q conformance.Query, knot, ours *dns.Msg) string {
	if knot.Truncated && ours.Truncated {
		return "truncated: RFC 2181 section 9 has the client discard it and retry over TCP"
	}
	return ""
}

// diff compares ontime's answer with Knot's and returns what differs.
func diff(q conformance.Query, knot, ours *dns.Msg) []string {
	var d []string
	if knot.Rcode != ours.Rcode {
		d = append(d, fmt.Sprintf("rcode: knot %s, ontime %s", dns.RcodeToString[knot.Rcode], dns.RcodeToString[ours.Rcode]))
	}
	if flags(knot) != flags(ours) {
		d = append(d, fmt.Sprintf("flags: knot [%s], ontime [%s]", flags(knot), flags(ours)))
	}
	if len(ours.Question) != 1 || ours.Question[0].Name != presentationOf(q.Name) {
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
			if strings.EqualFold(rr.Header().Name, q.Name) && rr.Header().Name != q.Name {
				d = append(d, fmt.Sprintf("answer owner %q does not keep the question's case %q", rr.Header().Name, q.Name))
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

// TestConformanceWithKnot runs the corpus against Knot and four ontime
// servers: zonestore alone (responses packed by miekg/dns behind CoreDNS's
// ScrubWriter), zonestore behind fastpack (packed by the wire encoder),
// the two behind codel (UDP queries answered by its workers), and the
// issue's whole chain with prometheus, asked each query twice before, so
// that its answer compared is one replayed from the octets kept (over UDP
// and TCP apart). Each
// must answer as Knot does, and as the others.
func TestConformanceWithKnot(t *testing.T) {
	zones := conformanceZones(t)
	knot := startKnot(t, zones)
	body, origins := zonestoreLines(zones, "")
	plain := startCoreDNS(t, body, origins...)
	fast := startCoreDNS(t, "    fastpack\n"+body, origins...)
	queued := startCoreDNS(t, "    fastpack\n    codel\n"+body, origins...)
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	full := startCoreDNSWith(t, onePAnswer, "    prometheus "+prom+"\n    fastpack\n    codel\n"+body, origins...)

	qs := conformance.Corpus(origins)
	if len(qs) < 500 {
		t.Fatalf("corpus has %d queries, want several hundred", len(qs))
	}
	servers := []struct {
		name string
		addr string
	}{{"zonestore", plain.addr}, {"zonestore+fastpack", fast.addr}, {"codel+fastpack+zonestore", queued.addr}, {"the full chain, asked twice", full.addr}}
	failed := map[string]int{}
	excused := 0
	udp := 0
	for _, q := range qs {
		if !q.TCP {
			udp++
			// Asked before the loop below asks it again: the full chain
			// answers that second query from the octets it kept, with
			// the same octets but the ID (TestReplayAnswersAsPacked).
			first, again := udpRaw(t, full.addr, q.Msg()), udpRaw(t, full.addr, q.Msg())
			if !bytes.Equal(first[2:], again[2:]) {
				failed["the full chain, asked twice"]++
				t.Errorf("%s: asked twice, two answers:\n% x\n% x", q, first, again)
			}
		} else {
			// Over TCP too: answers over a stream are kept apart from
			// UDP's, and replayed.
			for range 2 {
				if _, err := exchange(t, full.addr, q.Msg(), true); err != nil {
					t.Fatalf("full chain %s: %v", q, err)
				}
			}
		}
		k, err := exchange(t, knot.addr, q.Msg(), q.TCP)
		if err != nil {
			t.Fatalf("knot %s: %v", q, err)
		}
		var answers []*dns.Msg
		for _, s := range servers {
			o, err := exchange(t, s.addr, q.Msg(), q.TCP)
			if err != nil {
				t.Errorf("%s %s: %v", s.name, q, err)
				failed[s.name]++
				continue
			}
			if answerPolicy(q, k, o) != "" || additionalPolicy(q, k, o) != "" {
				excused++
			}
			if d := diff(q, k, o); len(d) > 0 {
				failed[s.name]++
				t.Errorf("%s %s:\n%s", s.name, q, strings.Join(d, "\n"))
			}
			answers = append(answers, o)
		}
		// With and without fastpack and codel, the same answer: the same
		// rcode, flags and sections, record for record.
		for i := 1; i < len(answers); i++ {
			if d := diff(q, answers[0], answers[i]); len(d) > 0 {
				failed[servers[i].name+" against zonestore"]++
				t.Errorf("%s changes the answer to %s:\n%s", servers[i].name, q, strings.Join(d, "\n"))
			}
		}
	}
	// Most UDP queries were answered from kept octets, the third time they
	// were asked (an answer is kept at its second miss, replay/admit.go),
	// and again where the corpus asks them again: those with no EDNS
	// option and an answer of MaxWire at most.
	hits := metric(t, prom, "coredns_zonestore_replay_hits_total")
	if hits < float64(udp) {
		t.Errorf("%g answers replayed for %d UDP queries asked three times each", hits, udp)
	}
	t.Logf("%d queries to each server; differences: %v; %d answers compared under a written policy; %g replayed", len(qs), failed, excused, hits)
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
