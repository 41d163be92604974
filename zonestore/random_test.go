package zonestore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/conformance"
	"github.com/ontimedns/ontime/internal/raceflag"
)

// TestReparseAnswersAsParse: a zone re-read after a few records changed is
// built as an edit of the version before (Reparse: Edit rebuilds only the
// names that changed, and what they change above and below them: empty
// non-terminals, wildcards, cuts). Each version must answer every question
// as the same file parsed whole does. Zones drawn at random (as
// test/random_test.go draws them against Knot) go through eight edits
// each: a record deleted, one added from another drawn zone, or both; an
// edit that leaves a file no zone may hold (a CNAME beside other data, an
// NS without its glue) must fail to reparse as it fails to parse, and the
// version before stays. Each zone is read small (its records compared) and
// padded past textMinBytes (its text compared), the two ways Reparse
// finds what changed.
func TestReparseAnswersAsParse(t *testing.T) {
	const origin = "example.org."
	// 150 zones: the edit that left a delegation without glue (a cut
	// above it gone) is met first at seed 140. Under the race detector,
	// ten times slower here, a tenth of them.
	seeds := uint64(150)
	if raceflag.Enabled {
		seeds = 15
	}
	edits, refused, compared := 0, 0, 0
	for seed := uint64(1); seed <= seeds; seed++ {
		for _, padded := range []bool{false, true} {
			rng := rand.New(rand.NewPCG(seed, 7))
			first := conformance.NewRandomZone(rng, origin)
			head, lines := first.Split()
			var donors []string
			names := slices.Clone(first.Ask)
			for range 3 {
				d := conformance.NewRandomZone(rng, origin)
				_, l := d.Split()
				donors = append(donors, l...)
				names = append(names, d.Ask...)
			}
			slices.Sort(names)
			names = slices.Compact(names)
			pad := ""
			if padded {
				var b strings.Builder
				for i := 0; b.Len() < textMinBytes; i++ {
					fmt.Fprintf(&b, "pad%d.zz TXT \"padding to keep the text of the file\"\n", i)
				}
				pad = b.String()
			}
			file := func(lines []string) string { return head + strings.Join(lines, "") + pad }
			z, err := Parse(strings.NewReader(file(lines)), origin, "random")
			if err != nil {
				t.Fatalf("seed %d: the drawn zone does not load: %v\n%s", seed, err, first.Text)
			}
			for step := range 8 {
				next := slices.Clone(lines)
				var change []string
				switch op := rng.IntN(3); {
				case op != 1 && len(next) > 0: // delete one
					i := rng.IntN(len(next))
					change = append(change, "deleted "+next[i])
					next = slices.Delete(next, i, i+1)
					if op == 0 {
						break
					}
					fallthrough
				default: // add one
					add := donors[rng.IntN(len(donors))]
					change = append(change, "added "+add)
					next = slices.Insert(next, rng.IntN(len(next)+1), add)
				}
				text := file(next)
				whole, werr := Parse(strings.NewReader(text), origin, "random")
				edited, eerr := z.Reparse(strings.NewReader(text), "random")
				if (werr == nil) != (eerr == nil) {
					t.Fatalf("seed %d padded %v step %d: parsed whole: %v; reparsed: %v\n%s", seed, padded, step, werr, eerr, head+strings.Join(next, ""))
				}
				edits++
				if werr != nil {
					refused++
					continue // the version before stays
				}
				for _, name := range names {
					for _, qt := range conformance.RandomTypes {
						compared++
						want, got := z2s(whole.Lookup(name, qt, false)), z2s(edited.Lookup(name, qt, false))
						if want != got {
							t.Fatalf("seed %d padded %v step %d (%s): %s %d:\nparsed whole:\n%s\nreparsed:\n%s\nthe file:\n%s",
								seed, padded, step, strings.Join(change, ", "), name, qt, want, got, head+strings.Join(next, ""))
						}
					}
				}
				z, lines = edited, next
			}
		}
	}
	t.Logf("%d edits (%d refused, as Parse refused them), %d answers compared", edits, refused, compared)
	if refused == edits || compared == 0 {
		t.Fatal("no edit was ever applied")
	}
}

// z2s renders a response for comparison: rcode and each section sorted.
func z2s(r Response) string {
	sec := func(rrs []dns.RR) string {
		var s []string
		for _, rr := range rrs {
			s = append(s, strings.ToLower(rr.String()))
		}
		slices.Sort(s)
		return strings.Join(s, "\n  ")
	}
	return fmt.Sprintf("rcode %d\nanswer:\n  %s\nauthority:\n  %s\nadditional:\n  %s", r.Rcode, sec(r.Answer), sec(r.Ns), sec(r.Extra))
}
