package test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/conformance"
)

// randomSeed is the first seed of TestRandomZonesAsKnot's zones:
// ONTIME_RANDOM_SEED=N draws others (a failure names the seed of its zone).
func randomSeed(t *testing.T) uint64 {
	s := os.Getenv("ONTIME_RANDOM_SEED")
	if s == "" {
		return 1
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("ONTIME_RANDOM_SEED=%q: %v", s, err)
	}
	return n
}

// drawZone draws the random zone of seed under origin: names of up to
// three labels, or ONTIME_RANDOM_LABELS=N, and with ONTIME_RANDOM_TTLS=1
// records of TTLs of their own (conformance.Shape): zones the fixed seeds
// do not draw.
func drawZone(t *testing.T, seed uint64, origin string) conformance.RandomZone {
	shape := conformance.Shape{Labels: 3, TTLs: os.Getenv("ONTIME_RANDOM_TTLS") != ""}
	if s := os.Getenv("ONTIME_RANDOM_LABELS"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n < 1 || n > 8 {
			t.Fatalf("ONTIME_RANDOM_LABELS=%q: want 1 to 8", s)
		}
		shape.Labels = n
	}
	return conformance.NewRandomZoneOf(rand.New(rand.NewPCG(seed, seed)), origin, shape)
}

// TestRandomZonesAsKnot is the conformance suite's differential half: zones
// drawn at random (conformance.NewRandomZone: a few dozen names of up to
// three labels of four letters, ONTIME_RANDOM_LABELS more (and
// ONTIME_RANDOM_TTLS, TTLs of their own); data, CNAMEs,
// DNAMEs, delegations with glue and DS, wildcards, and the empty non-terminals they make), served
// by Knot DNS and by ontime, zonestore alone and the whole chain;
// every name around them asked for every type. Each answer must be
// Knot's, as in TestConformanceWithKnot. Twelve zones are unsigned; twelve
// more are signed by dnssec-signzone (BIND's, as tools/signzone.sh signs
// the suite's), four with NSEC, four with NSEC3, four with NSEC3 and
// opt-out, and asked with DO, so that their proofs (a wildcard's, an
// empty non-terminal's, a delegation's without DS) are Knot's too. The
// seeds are fixed, so a run is repeatable; ONTIME_RANDOM_SEED moves them.
func TestRandomZonesAsKnot(t *testing.T) {
	const zones = 12
	first := randomSeed(t)
	t.Run("unsigned", func(t *testing.T) {
		askRandomZones(t, first, zones, "r", false, unsignedFile(t))
	})
	t.Run("signed", func(t *testing.T) {
		signer := signerOf(t, "ECDSAP256SHA256")
		askRandomZones(t, first+zones, zones, "s", true, func(dir string, z conformance.RandomZone, i uint64) string {
			return signer(dir, z, i*3/zones)
		})
	})
}

// askRandomZones draws n zones from seeds first on, named prefix and the
// seed (a failure names the zone, and so its seed), and asks them as
// askZones does.
func askRandomZones(t *testing.T, first, n uint64, prefix string, do bool, file func(dir string, z conformance.RandomZone, i uint64) string) {
	var drawn []conformance.RandomZone
	for i := range n {
		seed := first + i
		drawn = append(drawn, drawZone(t, seed, fmt.Sprintf("%s%d.test", prefix, seed)))
	}
	askZones(t, drawn, do, file)
}

// askZones writes the i-th of zones with file (in dir, returning its
// path), serves them by Knot and ontime, and asks them every query of
// each, with DO where do. The servers answer until the test ends.
func askZones(t *testing.T, zones []conformance.RandomZone, do bool, file func(dir string, z conformance.RandomZone, i uint64) string) *asKnot {
	dir := t.TempDir()
	var files []zoneFile
	var body strings.Builder
	var origins []string
	for i, z := range zones {
		path := file(dir, z, uint64(i))
		origin := strings.TrimSuffix(z.Origin, ".")
		files = append(files, zoneFile{origin: origin, path: path})
		origins = append(origins, origin)
		fmt.Fprintf(&body, "    zonestore %s %s\n", path, origin)
	}
	knot := startKnot(t, files)
	// Knot sends no UDP answer over 1232 octets whatever the client's
	// buffer (udp-max-payload, DNS Flag Day 2020); CoreDNS's bufsize
	// plugin is that limit here.
	plain := startCoreDNS(t, "    bufsize 1232\n"+body.String(), origins...)
	full := startCoreDNS(t, "    bufsize 1232\n    prometheus 127.0.0.1:0\n    fastpack\n    codel\n"+body.String(), origins...)
	ak := &asKnot{knot: knot, servers: []*server{plain, full}, names: []string{"zonestore", "the full chain"}, plain: plain}
	differ := 0
	for i, z := range zones {
		wrong := 0
		for _, q := range z.Queries(do) {
			wrong += ak.ask(t, q, wrong)
		}
		if wrong > 0 {
			differ++
			text, _ := os.ReadFile(files[i].path)
			if do {
				text = []byte(z.Text + "\n; signed:\n" + string(text))
			}
			t.Errorf("zone %s: %d answers differ from Knot's; the zone:\n%s", z.Origin, wrong, text)
		}
	}
	t.Logf("%d zones, %d queries to each server, %d zones answered otherwise than Knot; %s", len(zones), ak.asked, differ, ak)
	ak.check(t, do)
	return ak
}

// unsignedFile writes a zone's text as its file, for askZones.
func unsignedFile(t *testing.T) func(dir string, z conformance.RandomZone, _ uint64) string {
	return func(dir string, z conformance.RandomZone, _ uint64) string {
		path := filepath.Join(dir, z.Origin+"zone")
		if err := os.WriteFile(path, []byte(z.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
}

// handZone is a zone written by hand for a case the random zones meet
// only at some seeds: its text and the names to ask, relative.
type handZone struct {
	Text string
	Ask  []string
}

// under is the zone under origin, as askZones asks it.
func (h handZone) under(origin string) conformance.RandomZone {
	z := conformance.RandomZone{Origin: origin, Text: "$ORIGIN " + origin + "\n" + h.Text}
	for _, n := range h.Ask {
		z.Ask = append(z.Ask, n+"."+origin)
	}
	return z
}

// literalStarZone is a zone whose wildcard (*.d) covers names whose first
// label is a literal *: the questions of TestLiteralStarNamesAsKnot.
var literalStarZone = handZone{
	Text: `$TTL 3600
@ IN SOA ns hostmaster 1 7200 3600 1209600 300
@ NS ns
ns A 192.0.2.53
*.d AAAA 2001:db8::6
*.d TXT "*.d"
b.d A 192.0.2.8
c.c.d NS ns.c.c.d
ns.c.c.d A 192.0.2.14
`,
	// *.d.d and *.x.d: covered by *.d, next closer d.d and x.d; *.d: the
	// wildcard's own name; *.b.d: NXDOMAIN below b.d; x.*.d: NXDOMAIN
	// below the wildcard.
	Ask: []string{"*.d.d", "*.x.d", "*.d", "*.b.d", "x.*.d", "d.d"},
}

// TestLiteralStarNamesAsKnot asks literalStarZone, unsigned, NSEC-signed
// and NSEC3-signed, as the random tests ask theirs: Knot takes a literal *
// question for the wildcard's own name and leaves out the proof that no
// closer name exists (provesMore's policy), which the random zones meet
// only at some seeds (ONTIME_RANDOM_SEED=10240). Then each server's
// answer to *.d.d with DO must carry that proof, the NSEC or NSEC3 that
// covers the next closer name d.d (RFC 4035 3.1.3.3, RFC 5155 7.2.6):
// a server that answered as Knot does would pass the comparison alone.
func TestLiteralStarNamesAsKnot(t *testing.T) {
	t.Run("unsigned", func(t *testing.T) {
		askZones(t, []conformance.RandomZone{literalStarZone.under("star.test.")}, false, unsignedFile(t))
	})
	signer := signerOf(t, "ECDSAP256SHA256")
	for kind, name := range []string{"nsec", "nsec3"} {
		t.Run(name, func(t *testing.T) {
			origin := name + ".star.test."
			ak := askZones(t, []conformance.RandomZone{literalStarZone.under(origin)}, true, func(dir string, z conformance.RandomZone, _ uint64) string {
				return signer(dir, z, uint64(kind))
			})
			q := new(dns.Msg)
			q.SetQuestion("*.d.d."+origin, dns.TypeAAAA)
			q.SetEdns0(1232, true)
			for j, s := range ak.servers {
				m, err := exchange(t, s.addr, q, false)
				if err != nil {
					t.Fatalf("%s: %v", ak.names[j], err)
				}
				if len(m.Answer) == 0 {
					t.Fatalf("%s: no answer to *.d.d:\n%v", ak.names[j], m)
				}
				proved := false
				for _, rr := range m.Ns {
					switch rr := rr.(type) {
					case *dns.NSEC:
						proved = proved || coversPathOf(rr, "d.d."+origin)
					case *dns.NSEC3:
						proved = proved || rr.Cover("d.d."+origin)
					}
				}
				if !proved {
					t.Errorf("%s: *.d.d's answer without the proof that d.d does not exist:\n%v", ak.names[j], m)
				}
			}
		})
	}
}

// optOutZone has a name that only an insecure delegation is below (c.c,
// above a.c.c NS), which NSEC3 with opt-out leaves without an NSEC3, and
// a CNAME to a name below it that does not exist: the questions of
// TestOptOutGiveUpAsKnot.
var optOutZone = handZone{
	Text: `$TTL 3600
@ IN SOA ns hostmaster 1 7200 3600 1209600 300
@ NS ns
ns A 192.0.2.53
c A 192.0.2.6
*.c A 192.0.2.9
a.c.c NS ns.a.c.c
ns.a.c.c A 192.0.2.17
d.d CNAME a.d.c.c
b CNAME d.d
`,
	Ask: []string{"d.d", "b", "a.d.c.c", "x.c.c", "c.c", "a.c.c", "ns.a.c.c"},
}

// TestOptOutGiveUpAsKnot asks optOutZone, signed with NSEC3 and opt-out,
// as the random tests ask theirs. Knot gives up the NXDOMAIN below c.c
// (no AA, no records: it has no NSEC3 of the closest encloser), and with
// it the CNAMEs that led there; ontime answers the chain, as Knot does
// without DO, with its signatures and the proofs it has (the policy of
// asKnot.ask), which the random zones meet only at some seeds
// (ONTIME_RANDOM_SEED=20000 with names of up to four labels).
func TestOptOutGiveUpAsKnot(t *testing.T) {
	signer := signerOf(t, "ECDSAP256SHA256")
	askZones(t, []conformance.RandomZone{optOutZone.under("optout.test.")}, true, func(dir string, z conformance.RandomZone, _ uint64) string {
		return signer(dir, z, 2)
	})
}

// asKnot puts queries to Knot and to ontime's servers and compares the
// answers, as TestConformanceWithKnot does, under the written policies
// below (records Knot repeats, the wildcard glue it leaves under the
// wildcard's name, a truncation asked again over TCP, additional data
// Knot leaves out of a full answer without TC, an NXDOMAIN Knot
// sends without AA or proof, the proof of no closer name Knot leaves out
// for a literal * name, NSEC3's or NSEC's, an answer Knot truncates that
// fits the same room as ontime compresses it); it counts what it asked
// and what Knot's answers held.
type asKnot struct {
	knot    *server
	servers []*server
	names   []string // the servers', for messages
	plain   *server  // zonestore alone, whose truncation is miekg/dns's

	asked, excused, proofs, sigs int
}

// ask puts q to Knot and to every server and returns how many answers
// differ from Knot's, reporting each while reported and those before it
// are fewer than five.
func (a *asKnot) ask(t *testing.T, q conformance.Query, reported int) (wrong int) {
	t.Helper()
	a.asked++
	k, repeated := a.knotAnswer(t, q, q.TCP)
	// Knot's NXDOMAIN in a signed zone with neither AA nor an SOA: it
	// sent no proof, having none of the closest encloser (an empty
	// non-terminal that opt-out left without an NSEC3, above an insecure
	// delegation: ns.a.b where only a.a.b NS is below a.b). ontime sends
	// its answer with AA and the proofs it has; the rcode must still be
	// Knot's, and the answer Knot's without DO, with ontime's signatures
	// of its records: giving up, Knot drops the CNAMEs that led to the
	// name too (d.d CNAME a.d.c.c, where c.c is such a non-terminal).
	gaveUp := q.Do && k.Rcode == dns.RcodeNameError && !k.Authoritative && len(k.Ns) == 0
	var chain []dns.RR
	if gaveUp {
		unsigned := q
		unsigned.Do = false
		kp, _ := a.knotAnswer(t, unsigned, q.TCP)
		chain = kp.Answer
	}
	a.proofs += countTypes(k.Ns, dns.TypeNSEC, dns.TypeNSEC3)
	a.sigs += countTypes(k.Answer, dns.TypeRRSIG)
	for j, s := range a.servers {
		o, err := exchange(t, s.addr, q.Msg(), q.TCP)
		if err != nil {
			t.Errorf("%s %s: %v", a.names[j], q, err)
			wrong++
			continue
		}
		if repeated > 0 {
			a.excused++
		}
		want := k
		if o.Truncated && !k.Truncated && !q.TCP {
			// Knot leaves additional data out of a full UDP answer
			// without TC: an RRset that does not fit, or the signature
			// of one that does (RFC 2181 section 9 sets TC only for
			// data the answer needs; RFC 4035 section 3.1.1 lets a
			// signature in the additional section go alone), as
			// fastpack does but for a referral's glue (RFC 9471).
			// zonestore alone, packed by miekg/dns's Truncate, sets TC
			// where the additional section does not fit whole: the
			// client asks again over TCP, and that answer must be
			// Knot's over TCP (seed 70369, four labels, TTLs: an MX
			// target's address kept, its signature left out). And
			// miekg/dns's Truncate, which packs the answers of
			// zonestore alone (CoreDNS's ScrubWriter), reckons
			// compressed lengths high (1,291 octets for an answer it
			// packs in 1,219) and truncates some that fit: asked
			// again over TCP, that answer must be Knot's.
			kt, _ := a.knotAnswer(t, q, true)
			if keptLess := additionalLeftOut(k, kt); keptLess || s == a.plain {
				if o, err = exchange(t, s.addr, q.Msg(), true); err != nil {
					t.Errorf("%s %s over TCP: %v", a.names[j], q, err)
					wrong++
					continue
				}
				if keptLess {
					want = kt
				}
				a.excused++
			}
		}
		if k.Truncated && !o.Truncated && !q.TCP {
			// ontime's encoder points into the names of a record's
			// data (a CNAME's target), Knot's only into owner names:
			// an answer 9 octets over 1232 for Knot fits for ontime
			// (1,229, where Knot writes 1,241 over TCP). Knot's whole
			// answer is then its answer over TCP, and ontime's must be
			// within 1232 octets.
			if n := len(udpRaw(t, s.addr, q.Msg())); n > 1232 {
				t.Errorf("%s %s: %d octets over UDP, past 1232", a.names[j], q, n)
				wrong++
				continue
			}
			want, _ = a.knotAnswer(t, q, true)
			a.excused++
		}
		if gaveUp {
			want = k.Copy()
			want.Authoritative, want.Ns = o.Authoritative, o.Ns
			want.Answer = withSignatures(chain, o.Answer)
			a.excused++
		}
		d := diff(q, want, o)
		switch {
		case len(d) == 0:
		case provesMore(q, want, o):
			a.excused++
		default:
			if reported+wrong < 5 {
				t.Errorf("%s %s:\n%s", a.names[j], q, strings.Join(d, "\n"))
			}
			wrong++
		}
	}
	return wrong
}

// withSignatures is rrs with the signatures among signed that cover one
// of its RRsets (by owner and type).
func withSignatures(rrs, signed []dns.RR) []dns.RR {
	out := slices.Clone(rrs)
	for _, rr := range signed {
		sig, ok := rr.(*dns.RRSIG)
		if !ok {
			continue
		}
		if slices.ContainsFunc(rrs, func(r dns.RR) bool {
			return r.Header().Rrtype == sig.TypeCovered && strings.EqualFold(r.Header().Name, sig.Hdr.Name)
		}) {
			out = append(out, sig)
		}
	}
	return out
}

// knotAnswer is Knot's answer to q, over TCP where tcp, with what
// renameWildcardGlue and dropRepeats put right in it, and how many
// records that was.
func (a *asKnot) knotAnswer(t *testing.T, q conformance.Query, tcp bool) (*dns.Msg, int) {
	t.Helper()
	k, err := exchange(t, a.knot.addr, q.Msg(), tcp)
	if err != nil {
		t.Fatalf("knot %s: %v", q, err)
	}
	repeated := renameWildcardGlue(k) // first: a record it renames is no repeat of the answer's
	return k, repeated + dropRepeats(k)
}

// additionalLeftOut reports whether udp, Knot's answer over UDP, is tcp,
// its answer over TCP, but for additional records or signatures left out
// for room, without TC.
func additionalLeftOut(udp, tcp *dns.Msg) bool {
	if udp.Truncated || udp.Rcode != tcp.Rcode || !slices.Equal(section(udp.Answer), section(tcp.Answer)) || !slices.Equal(section(udp.Ns), section(tcp.Ns)) {
		return false
	}
	all := section(tcp.Extra)
	kept := section(udp.Extra)
	if len(kept) >= len(all) {
		return false
	}
	for _, rr := range kept {
		if !slices.Contains(all, rr) {
			return false
		}
	}
	return true
}

// provesMore reports whether ours is knot's answer to a question whose
// first label is a literal * naming no wildcard of the zone (one drawn and
// deleted since, *.a.b), which another wildcard covers (*.b): with more
// denial records in authority, and nothing else different. Knot takes any
// such question for the wildcard's own name (its wildcard_expanded is
// false for a QNAME that starts with *), and so leaves out the proof that
// no closer name exists: in an NSEC3 zone it sends the NSEC3 that matches
// the wildcard alone, where ontime sends the closest encloser proof with
// it, as RFC 5155 section 7.2.5 asks; in an NSEC zone it sends no NSEC
// for a positive answer, and only the wildcard's own for a NODATA, where
// ontime sends the NSEC that covers the next closer name too, as RFC 4035
// sections 3.1.3.3 and 3.1.3.4 ask. Each NSEC ontime adds must cover a
// name on the question's path (the question or an ancestor of it, below
// the zone's apex): one proving something else fails.
func provesMore(q conformance.Query, knot, ours *dns.Msg) bool {
	if !q.Do || !strings.HasPrefix(q.Name, "*.") || knot.Rcode != ours.Rcode || flags(knot) != flags(ours) ||
		!slices.Equal(section(knot.Answer), section(ours.Answer)) || !slices.Equal(section(knot.Extra), section(ours.Extra)) {
		return false
	}
	theirs := map[string]bool{}
	for _, s := range section(knot.Ns) {
		theirs[s] = true
	}
	more := 0
	for _, rr := range ours.Ns {
		if s := strings.ToLower(rr.String()); theirs[s] {
			delete(theirs, s)
			continue
		}
		more++
		switch rr := rr.(type) {
		case *dns.NSEC3:
		case *dns.NSEC:
			if !coversPathOf(rr, q.Name) {
				return false
			}
		case *dns.RRSIG:
			if rr.TypeCovered != dns.TypeNSEC3 && rr.TypeCovered != dns.TypeNSEC {
				return false
			}
		default:
			return false
		}
	}
	return len(theirs) == 0 && more > 0
}

// coversPathOf reports whether nsec covers (RFC 4034 section 4.1.1: lies
// strictly between its owner and its next name, in canonical order, the
// last NSEC of a zone reaching back to its apex) name or one of its
// ancestors that its next name is not an ancestor of: a name of that path
// that does not exist.
func coversPathOf(nsec *dns.NSEC, name string) bool {
	labels := dns.SplitDomainName(name)
	for i := range labels {
		n := dns.Fqdn(strings.Join(labels[i:], "."))
		if dns.IsSubDomain(n, nsec.NextDomain) || dns.IsSubDomain(n, nsec.Hdr.Name) {
			return false // the apex, or an ancestor of either end: a name that exists
		}
		after, before := canonicalLess(nsec.Hdr.Name, n), canonicalLess(n, nsec.NextDomain)
		if after && (before || !canonicalLess(nsec.Hdr.Name, nsec.NextDomain)) {
			return true
		}
	}
	return false
}

// canonicalLess reports whether a sorts before b in RFC 4034 section
// 6.1's canonical order: label by label from the root, each compared as
// lowercase octets, a name before its descendants. The random zones'
// names have no escapes.
func canonicalLess(a, b string) bool {
	la, lb := dns.SplitDomainName(strings.ToLower(a)), dns.SplitDomainName(strings.ToLower(b))
	for i := 1; i <= len(la) && i <= len(lb); i++ {
		if c := strings.Compare(la[len(la)-i], lb[len(lb)-i]); c != 0 {
			return c < 0
		}
	}
	return len(la) < len(lb)
}

func (a *asKnot) String() string {
	return fmt.Sprintf("%d answers compared under a written policy (records Knot repeats, wildcard glue Knot leaves under the wildcard's name, a truncation asked again over TCP, additional data Knot left out without TC, an NXDOMAIN Knot sent without proof, a proof of no closer name Knot left out, an answer that fits ontime's compression); Knot's answers held %d signatures, %d NSEC and NSEC3 records in authority",
		a.excused, a.sigs, a.proofs)
}

// check fails the test where signed zones were asked with DO and Knot's
// answers held no signatures or no proofs: then nothing signed was
// compared.
func (a *asKnot) check(t *testing.T, do bool) {
	if do && (a.sigs == 0 || a.proofs == 0) {
		t.Errorf("signed zones asked with DO, but Knot's answers held %d signatures and %d proofs: the zones were not signed, or DO not set", a.sigs, a.proofs)
	}
}

// renameWildcardGlue gives each additional record of m that a wildcard
// owns the name of the SVCB or HTTPS target it stands for, and returns
// how many it renamed. For an MX, SRV or NS target that only a wildcard
// covers, Knot writes the wildcard's records under the target's name (a
// compression pointer to it in the record that names it); for an SVCB or
// HTTPS target, whose name is never compressed, the pointer is not made,
// and they go under the wildcard's own name (*.c for w.c), which names
// another host. ontime writes the target's name for every type.
func renameWildcardGlue(m *dns.Msg) int {
	var targets []string
	for _, rr := range m.Answer {
		switch r := rr.(type) {
		case *dns.SVCB:
			targets = append(targets, r.Target)
		case *dns.HTTPS:
			targets = append(targets, r.Target)
		}
	}
	n := 0
	for _, rr := range m.Extra {
		h := rr.Header()
		if !strings.HasPrefix(h.Name, "*.") || h.Rrtype == dns.TypeNSEC {
			continue
		}
		if sig, ok := rr.(*dns.RRSIG); ok && sig.TypeCovered == dns.TypeNSEC {
			continue // the proof of what the target lacks is the wildcard's own NSEC, rightly under its name
		}
		for _, t := range targets {
			if dns.IsSubDomain(h.Name[2:], t) && dns.CountLabel(t) > dns.CountLabel(h.Name[2:]) {
				h.Name = t
				n++
				break
			}
		}
	}
	return n
}

// countTypes counts the records of rrs of the types given.
func countTypes(rrs []dns.RR, types ...uint16) int {
	n := 0
	for _, rr := range rrs {
		if slices.Contains(types, rr.Header().Rrtype) {
			n++
		}
	}
	return n
}

// signerOf returns what signs a drawn zone in dir, as tools/signzone.sh
// signs the suite's (a KSK and a ZSK of alg, ECDSAP256SHA256 there,
// signatures from 2026 to 2046): kind 0 with NSEC, 1 with NSEC3, 2 with
// NSEC3 and opt-out. It returns the signed file's path. The keys are made
// the first time a zone is signed, and sign each version of it after. Without BIND's dnssec-signzone the test
// is skipped, or fails where ONTIME_REQUIRE_KNOT is set (make test
// installs both).
func signerOf(t *testing.T, alg string) func(dir string, z conformance.RandomZone, kind uint64) string {
	keygen, err := exec.LookPath("dnssec-keygen")
	signzone, err2 := exec.LookPath("dnssec-signzone")
	if err != nil || err2 != nil {
		if os.Getenv("ONTIME_REQUIRE_KNOT") != "" {
			t.Fatal("dnssec-keygen or dnssec-signzone not found: install Debian's bind9-utils package (make test does)")
		}
		t.Skip("dnssec-signzone not found; `make test` installs it")
	}
	return func(dir string, z conformance.RandomZone, kind uint64) string {
		unsigned := filepath.Join(dir, z.Origin+"unsigned")
		if err := os.WriteFile(unsigned, []byte(z.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		run := func(name string, args ...string) {
			if out, err := exec.Command(name, args...).CombinedOutput(); err != nil {
				t.Fatalf("%s %s: %v\n%s\nthe zone:\n%s", name, strings.Join(args, " "), err, out, z.Text)
			}
		}
		if keys, _ := filepath.Glob(filepath.Join(dir, "K"+z.Origin+"+*.key")); len(keys) == 0 {
			run(keygen, "-q", "-K", dir, "-a", alg, "-f", "KSK", "-n", "ZONE", z.Origin)
			run(keygen, "-q", "-K", dir, "-a", alg, "-n", "ZONE", z.Origin)
		}
		signed := filepath.Join(dir, z.Origin+"zone")
		args := []string{"-q", "-K", dir, "-S", "-O", "full", "-o", z.Origin, "-s", "20260101000000", "-e", "20460101000000", "-f", signed}
		switch kind {
		case 1:
			args = append(args, "-3", "cafe", "-H", "0")
		case 2:
			args = append(args, "-3", "cafe", "-H", "0", "-A")
		}
		run(signzone, append(args, "-d", dir, unsigned)...)
		return signed
	}
}

// dropRepeats takes out of m's sections each record that is there twice,
// and returns how many. Knot repeats one where a wildcard's CNAME leads
// back to a name the wildcard covers (*.c CNAME w.c, asked for w.c: w.c
// CNAME w.c twice, once for the name asked and once for the loop it
// meets), where a DNAME loop comes back to the name it began with (the
// CNAME made for it, twice), and in the additional section for two
// records with one target (two MX of w.c: w.c's addresses twice), and for
// an SVCB record whose target is its own owner (the answer's SVCB again,
// in additional). RFC 2181 section 5 has an RRset hold no record twice,
// and ontime's answer holds each once, and nothing in additional that the
// answer holds.
func dropRepeats(m *dns.Msg) int {
	n := 0
	inAnswer := map[string]bool{}
	for _, rr := range m.Answer {
		inAnswer[strings.ToLower(rr.String())] = true
	}
	for _, sec := range []*[]dns.RR{&m.Answer, &m.Ns, &m.Extra} {
		seen := map[string]bool{}
		if sec == &m.Extra {
			seen = inAnswer
		}
		kept := (*sec)[:0]
		for _, rr := range *sec {
			s := strings.ToLower(rr.String())
			if seen[s] {
				n++
				continue
			}
			seen[s] = true
			kept = append(kept, rr)
		}
		*sec = kept
	}
	return n
}

// TestCoversPathOf holds provesMore's NSEC check to RFC 4034: its order
// (section 6.1's example) and what an NSEC covers.
func TestCoversPathOf(t *testing.T) {
	order := []string{"example.", "a.example.", "yljkjljk.a.example.", "Z.a.example.", "zABC.a.EXAMPLE.",
		"z.example.", "*.z.example."}
	for i := 1; i < len(order); i++ {
		if !canonicalLess(order[i-1], order[i]) || canonicalLess(order[i], order[i-1]) {
			t.Errorf("%q should sort before %q", order[i-1], order[i])
		}
	}
	nsec := func(owner, next string) *dns.NSEC {
		return &dns.NSEC{Hdr: dns.RR_Header{Name: owner, Rrtype: dns.TypeNSEC}, NextDomain: next}
	}
	for _, c := range []struct {
		owner, next, name string
		want              bool
	}{
		{"c.c.d.z.test.", "ns.z.test.", "*.d.d.z.test.", true}, // d.d, the next closer, between them
		{"*.d.z.test.", "b.d.z.test.", "*.d.d.z.test.", false}, // d.d after b.d
		{"a.z.test.", "c.z.test.", "*.b.z.test.", true},
		{"a.z.test.", "b.c.z.test.", "*.c.z.test.", true}, // *.c before b.c, though c exists
		{"a.z.test.", "b.c.z.test.", "x.*.c.z.test.", true},
		{"a.z.test.", "b.z.test.", "*.c.z.test.", false},   // neither *.c nor c between them
		{"a.b.z.test.", "c.z.test.", "*.b.z.test.", false}, // b exists: an ancestor of the owner
		{"ns.z.test.", "z.test.", "zz.z.test.", true},      // the last NSEC, back to the apex
		{"ns.z.test.", "z.test.", "a.z.test.", false},
	} {
		if got := coversPathOf(nsec(c.owner, c.next), c.name); got != c.want {
			t.Errorf("NSEC %s -> %s covering the path of %s: %v, want %v", c.owner, c.next, c.name, got, c.want)
		}
	}
}
