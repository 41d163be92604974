package test

import (
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
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

// TestRandomZonesAsKnot is the conformance suite's differential half: zones
// drawn at random (conformance.NewRandomZone: a few dozen names of up to
// three labels of four letters, data, CNAMEs, DNAMEs, delegations with
// glue and DS, wildcards, and the empty non-terminals they make), served
// by Knot DNS and by ontime, zonestore alone and the whole chain;
// every name around them asked for every type. Each answer must be
// Knot's, as in TestConformanceWithKnot. The seeds are fixed, so a run
// is repeatable; ONTIME_RANDOM_SEED moves them.
func TestRandomZonesAsKnot(t *testing.T) {
	const zones = 12
	first := randomSeed(t)
	dir := t.TempDir()
	var files []zoneFile
	var drawn []conformance.RandomZone
	var body strings.Builder
	var origins []string
	for i := range uint64(zones) {
		seed := first + i
		z := conformance.NewRandomZone(rand.New(rand.NewPCG(seed, seed)), fmt.Sprintf("r%d.test", seed))
		path := filepath.Join(dir, z.Origin+"zone")
		if err := os.WriteFile(path, []byte(z.Text), 0o644); err != nil {
			t.Fatal(err)
		}
		origin := strings.TrimSuffix(z.Origin, ".")
		files = append(files, zoneFile{origin: origin, path: path})
		drawn = append(drawn, z)
		origins = append(origins, origin)
		fmt.Fprintf(&body, "    zonestore %s %s\n", path, origin)
	}
	knot := startKnot(t, files)
	plain := startCoreDNS(t, body.String(), origins...)
	full := startCoreDNS(t, "    prometheus 127.0.0.1:0\n    fastpack\n    codel\n"+body.String(), origins...)
	servers := []*server{plain, full}
	names := []string{"zonestore", "the full chain"}

	asked, differ, excused := 0, 0, 0
	for i, z := range drawn {
		wrong := 0
		for _, q := range z.Queries() {
			asked++
			k, err := exchange(t, knot.addr, q.Msg(), q.TCP)
			if err != nil {
				t.Fatalf("knot %s: %v", q, err)
			}
			repeated := dropRepeats(k)
			for j, s := range servers {
				o, err := exchange(t, s.addr, q.Msg(), q.TCP)
				if err != nil {
					t.Errorf("%s %s: %v", names[j], q, err)
					wrong++
					continue
				}
				if repeated > 0 {
					excused++
				}
				if d := diff(q, k, o); len(d) > 0 {
					if wrong < 5 {
						t.Errorf("%s %s:\n%s", names[j], q, strings.Join(d, "\n"))
					}
					wrong++
				}
			}
		}
		if wrong > 0 {
			differ++
			t.Errorf("zone of seed %d: %d answers differ from Knot's; the zone:\n%s", first+uint64(i), wrong, z.Text)
		}
	}
	t.Logf("%d zones, %d queries to each server, %d zones answered otherwise than Knot; %d answers compared without the records Knot repeats",
		zones, asked, differ, excused)
}

// dropRepeats takes out of m's sections each record that is there twice,
// and returns how many. Knot repeats one where a wildcard's CNAME leads
// back to a name the wildcard covers (*.c CNAME w.c, asked for w.c: w.c
// CNAME w.c twice, once for the name asked and once for the loop it
// meets), where a DNAME loop comes back to the name it began with (the
// CNAME made for it, twice), and in the additional section for two
// records with one target (two MX of w.c: w.c's addresses twice). RFC
// 2181 section 5 has an RRset hold no record twice, and ontime's answer
// holds each once.
func dropRepeats(m *dns.Msg) int {
	n := 0
	for _, sec := range []*[]dns.RR{&m.Answer, &m.Ns, &m.Extra} {
		seen := map[string]bool{}
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
