package test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/conformance"
	"github.com/ontimedns/ontime/internal/freeport"
	"github.com/ontimedns/ontime/zonestore"
)

// TestRandomIXFRAsKnot: ontime as a secondary of Knot DNS, following zones
// drawn at random through five versions each by NOTIFY and IXFR. Each new
// version deletes records, puts back ones deleted before and changes
// addresses and texts; Knot sends the difference from its journal, and
// ontime applies it as an edit of the version it serves (Zone.Edit, which
// rebuilds only the names that changed). After every version each
// secondary must answer every query as a Knot that loaded the version
// whole answers it: the edit must leave what a whole load of the file
// would, and the full chain's replay must serve no answer kept from the
// version before. (Not as the primary answers: Knot's own difference
// leaves some additional records stale; followRandomZones says which.) Four
// zones are unsigned; three are signed (NSEC, NSEC3, NSEC3 with opt-out)
// with Ed25519, whose signatures are the same for the same data, so that
// a version's difference holds the signatures and proofs of what changed,
// as a signer that keeps its signatures sends. Every version must arrive
// as an IXFR. ONTIME_RANDOM_SEED moves the seeds, and
// ONTIME_RANDOM_LABELS deepens the zones, as for TestRandomZonesAsKnot.
func TestRandomIXFRAsKnot(t *testing.T) {
	first := randomSeed(t) + 1000
	t.Run("unsigned", func(t *testing.T) {
		followRandomZones(t, first, 4, "i", nil)
	})
	t.Run("signed", func(t *testing.T) {
		followRandomZones(t, first+4, 3, "j", signerOf(t, "ED25519"))
	})
}

// versions is how many versions of each zone are served and compared.
const versions = 5

// versionedZone is a drawn zone and its version now: the lines of its
// file after the head (origin, TTL, SOA, apex NS and its address), and
// the lines deleted from it, which a later version may put back.
type versionedZone struct {
	conformance.RandomZone
	head           string
	lines, deleted []string
	serial         int
	kind           uint64 // how it is signed (signerOf)
}

// text is the zone file of the version now.
func (v *versionedZone) text() string {
	head := strings.Replace(v.head, " hostmaster 1 ", fmt.Sprintf(" hostmaster %d ", v.serial), 1)
	return head + strings.Join(v.lines, "")
}

// edit makes the next version: one to three changes, each deleting a line,
// putting one back, or changing an address or a text. A version a zone may
// not hold (a delegation left without the glue it needs, which zonestore
// refuses) is drawn again. The serial goes up.
func (v *versionedZone) edit(t *testing.T, rng *rand.Rand, counter *int) {
	t.Helper()
	for range 20 {
		lines, deleted := slices.Clone(v.lines), slices.Clone(v.deleted)
		for range 1 + rng.IntN(3) {
			switch op := rng.IntN(3); {
			case op == 1 && len(deleted) > 0:
				i := rng.IntN(len(deleted))
				lines = slices.Insert(lines, rng.IntN(len(lines)+1), deleted[i])
				deleted = slices.Delete(deleted, i, i+1)
			case op == 2:
				i := rng.IntN(len(lines))
				owner, typ := recordFields(lines[i])
				*counter++
				switch typ {
				case "A":
					lines[i] = fmt.Sprintf("%s A 198.51.100.%d\n", owner, 1+*counter%250)
				case "AAAA":
					lines[i] = fmt.Sprintf("%s AAAA 2001:db8:1::%x\n", owner, *counter)
				case "TXT":
					lines[i] = fmt.Sprintf("%s TXT \"v%d\"\n", owner, *counter)
				}
			case len(lines) > 1:
				i := rng.IntN(len(lines))
				deleted = append(deleted, lines[i])
				lines = slices.Delete(lines, i, i+1)
			}
		}
		next := versionedZone{RandomZone: v.RandomZone, head: v.head, lines: lines, serial: v.serial + 1}
		if _, err := zonestore.Parse(strings.NewReader(next.text()), v.Origin, "drawn"); err == nil && !dsWithoutNS(lines) {
			v.lines, v.deleted = lines, deleted
			break
		}
	}
	v.serial++
}

// dsWithoutNS reports whether a DS record's owner has no NS record: the
// parent's side of a delegation without the delegation, which a signer
// (dnssec-signzone) refuses to sign.
func dsWithoutNS(lines []string) bool {
	ns := map[string]bool{}
	for _, l := range lines {
		if owner, typ := recordFields(l); typ == "NS" {
			ns[owner] = true
		}
	}
	for _, l := range lines {
		if owner, typ := recordFields(l); typ == "DS" && !ns[owner] {
			return true
		}
	}
	return false
}

// recordFields is a drawn zone's line's owner and type, past the TTL a
// line may have (conformance.Shape's TTLs).
func recordFields(line string) (owner, typ string) {
	f := strings.Fields(line)
	if len(f) > 2 && f[1][0] >= '0' && f[1][0] <= '9' {
		f = append(f[:1], f[2:]...)
	}
	if len(f) < 2 {
		return "", ""
	}
	return f[0], f[1]
}

// followRandomZones draws n zones from seeds first on, named prefix and the
// seed, serves them from Knot as primary to two ontime secondaries
// (zonestore alone, and the full chain), and compares the
// secondaries' answers at each version with those of another Knot that
// loads the version whole. With sign, the zones are signed and asked with
// DO.
func followRandomZones(t *testing.T, first, n uint64, prefix string, sign func(dir string, z conformance.RandomZone, kind uint64) string) {
	dir := t.TempDir()
	file := func(v *versionedZone) string {
		if sign == nil {
			return v.text()
		}
		z := v.RandomZone
		z.Text = v.text()
		return readFile(t, sign(dir, z, v.kind))
	}
	var zones []*versionedZone
	var texts []primaryZone
	var origins []string
	for i := range n {
		seed := first + i
		z := drawZone(t, seed, fmt.Sprintf("%s%d.test", prefix, seed))
		v := &versionedZone{RandomZone: z, serial: 1, kind: i % 3}
		v.head, v.lines = z.Split()
		zones = append(zones, v)
		origin := strings.TrimSuffix(z.Origin, ".")
		texts = append(texts, primaryZone{origin: origin, text: file(v)})
		origins = append(origins, origin)
	}
	plainPort, fullPort, prom := freeport.Get(t), freeport.Get(t), fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	followPort := freeport.Get(t)
	primary := startKnotPrimaries(t, texts, []int{plainPort, fullPort}, "", "difference")
	// The answers are compared with a Knot that loads each version whole:
	// Knot 3.2 applying a difference (an IXFR, or a zone file read as one)
	// leaves the additional records of a name it did not change as they
	// were (*.d A added: a wildcard SRV's target c.c.d it now covers gets
	// none), where loaded whole it adds them, as ontime does.
	knot := startKnotPrimaries(t, texts, nil, "", "whole")
	var secondaries strings.Builder
	for _, o := range origins {
		fmt.Fprintf(&secondaries, "        secondary %s %s\n", o, primary.addr)
	}
	// bufsize 1232: Knot's largest UDP answer (TestRandomZonesAsKnot).
	corefile := func(port int, plugins string) string {
		return fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    bufsize 1232\n%s    zonestore {\n%s    }\n}\n", port, plugins, secondaries.String())
	}
	// zonestore alone serves what it follows onward, by IXFR out, to a
	// third Knot (zonestore.Diff between the versions it keeps).
	plain := startCorefile(t, corefile(plainPort, fmt.Sprintf("    transfer {\n        to 127.0.0.1:%d\n    }\n", followPort)), plainPort, origins...)
	full := startCorefile(t, corefile(fullPort, fmt.Sprintf("    prometheus %s\n    fastpack\n    codel\n", prom)), fullPort, origins...)
	follower := startKnotFollower(t, knotd(t), followPort, plainPort, "", origins...)
	ak := &asKnot{knot: knot.server, servers: []*server{plain, full}, names: []string{"zonestore", "the full chain"}, plain: plain}

	rng := rand.New(rand.NewPCG(first, 11))
	counter := 0
	differ := 0
	for version := 1; version <= versions; version++ {
		if version > 1 {
			for _, v := range zones {
				v.edit(t, rng, &counter)
				text := file(v)
				for _, k := range []*knotPrimary{primary, knot} {
					k.write(t, strings.TrimSuffix(v.Origin, "."), text)
				}
			}
			primary.reload(t)
			knot.reload(t)
		}
		for _, v := range zones {
			for _, s := range []*server{primary.server, knot.server, plain, full, follower} {
				eventually(t, fmt.Sprintf("%s's serial %d at %s", v.Origin, v.serial, s.name), func() bool { return serialOf(t, s.addr, v.Origin) == v.serial })
			}
		}
		for _, v := range zones {
			wrong := 0
			for _, q := range v.Queries(sign != nil) {
				wrong += ak.ask(t, q, wrong)
			}
			if wrong > 0 {
				differ++
				t.Errorf("%s version %d: %d answers differ from Knot's; the unsigned zone:\n%s", v.Origin, version, wrong, v.text())
			}
			got, want := section(axfr(t, follower.addr, v.Origin)), section(axfr(t, knot.addr, v.Origin))
			if !slices.Equal(got, want) {
				differ++
				t.Errorf("%s version %d: the Knot that follows zonestore holds %d records, the Knot that loads the version whole %d; first difference: %s; the unsigned zone:\n%s",
					v.Origin, version, len(got), len(want), firstDiff(got, want), v.text())
			}
		}
		if differ > 0 {
			break
		}
	}
	for _, o := range origins {
		if differ > 0 {
			break // the versions after it were not asked for
		}
		if got := metric(t, prom, fmt.Sprintf(`coredns_zonestore_transfers_total{result="published",type="ixfr",zone="%s."}`, o)); got != versions-1 {
			t.Errorf("%s: %v versions published from an IXFR, want %d", o, got, versions-1)
		}
		if got := followedByIXFR(follower.log.String(), o); got != versions-1 {
			t.Errorf("%s: the Knot that follows zonestore took %d versions by IXFR (its log's \"IXFR, incoming ... finished\", none AXFR-style or a fallback), want %d:\n%s",
				o, got, versions-1, follower.log.String())
		}
	}
	t.Logf("%d zones through %d versions, %d queries to each server; %s", n, versions, ak.asked, ak)
	ak.check(t, sign != nil)
}

// followedByIXFR counts the IXFRs Knot's log says it took in whole for
// origin, or -1 where one came AXFR-style or fell back to AXFR: the
// difference was not one it could apply.
func followedByIXFR(log, origin string) int {
	n := 0
	for _, l := range strings.Split(log, "\n") {
		if !strings.Contains(l, "["+origin+".] IXFR, incoming") {
			continue
		}
		if strings.Contains(l, "AXFR-style") || strings.Contains(l, "fallback") {
			return -1
		}
		if strings.Contains(l, ", finished") {
			n++
		}
	}
	return n
}

// serialOf is the serial of the SOA that addr answers for zone, or -1.
func serialOf(t *testing.T, addr, zone string) int {
	m := new(dns.Msg)
	m.SetQuestion(zone, dns.TypeSOA)
	r, err := exchange(t, addr, m, false)
	if err != nil || len(r.Answer) == 0 {
		return -1
	}
	if soa, ok := r.Answer[0].(*dns.SOA); ok {
		return int(soa.Serial)
	}
	return -1
}

// readFile is path's content.
func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
