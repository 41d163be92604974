package zonestore

import (
	"fmt"
	"strings"
	"testing"
	"unsafe"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/ahead"
)

// warmed warms the question of name and qtype, with DO, through every
// step s.Warm takes, and returns its note.
func warmed(t *testing.T, s *Store, name string, qtype uint16) *ahead.Note {
	t.Helper()
	note := &ahead.Note{DO: true}
	q := question(t, name, qtype)
	for steps := 0; note.Step != ahead.Done; steps++ {
		if steps == 20 {
			t.Fatalf("%s: warming not done after %d steps", name, steps)
		}
		s.Warm(note, q)
	}
	return note
}

// warmedAnswer is z's answer to name and qtype with DO, as text, given the
// query's warming note (nil: none).
func warmedAnswer(t *testing.T, z *Zone, name string, qtype uint16, note *ahead.Note) string {
	t.Helper()
	n, err := NewName(name)
	if err != nil {
		t.Fatal(err)
	}
	var res Response
	z.AnswerWarmed(&res, n, qtype, true, note)
	return responseText(&res)
}

// TestWarmedCoverAnswersAsHashed: a denial read from the warming's note is
// the denial the name's hash gives, for names just below the apex (their
// next closer name the question, the note's) and below a name the zone
// lacks (the note's name is not the one denied), in any case.
func TestWarmedCoverAnswersAsHashed(t *testing.T) {
	s, zones := conformanceStore(t)
	z := zones[2] // nsec3.test
	read := 0
	for i := range 1000 {
		for _, name := range []string{
			fmt.Sprintf("absent-%d.nsec3.test.", i),
			fmt.Sprintf("Absent-%d.NSEC3.test.", i),
			fmt.Sprintf("deep.absent-%d.nsec3.test.", i),
		} {
			note := warmed(t, s, name, dns.TypeA)
			k, err := key(name)
			if err != nil {
				t.Fatal(err)
			}
			if n3 := z.warmedCover(note, k); n3 != nil {
				if want := z.cover(k); n3 != want {
					t.Fatalf("%s: the note's cover is %s, its hash's %s", name, n3.hash, want.hash)
				}
				read++
			}
			if got, want := warmedAnswer(t, z, name, dns.TypeA, note), warmedAnswer(t, z, name, dns.TypeA, nil); got != want {
				t.Fatalf("%s warmed:\n%s\nwant, as hashed:\n%s", name, got, want)
			}
		}
	}
	// Every name's note gives the cover of its own hash. A deep name's
	// denial covers its parent's instead (its next closer name), and
	// answered as hashed: the note was not read for that name.
	if read != 3000 {
		t.Fatalf("the note gave the cover of %d names, want 3000", read)
	}
}

// TestWarmedCoverChecksItsNote: a note is read only for the name, zone
// version and record it was made for; a note that names another record
// of the zone, for its name, is read (so the denial does read it).
func TestWarmedCoverChecksItsNote(t *testing.T) {
	s, zones := conformanceStore(t)
	z := zones[2]
	const name, other = "absent-1.nsec3.test.", "absent-2.nsec3.test."
	k, _ := key(name)
	note := warmed(t, s, name, dns.TypeA)
	if z.warmedCover(note, k) == nil {
		t.Fatalf("%s: the note gives no cover: %+v", name, note)
	}
	ko, _ := key(other)
	if n3 := z.warmedCover(note, ko); n3 != nil {
		t.Errorf("the note of %s gives a cover for %s", name, other)
	}
	again, err := ParseFile("../testdata/zones/nsec3.test.zone", "nsec3.test")
	if err != nil {
		t.Fatal(err)
	}
	if again.warmedCover(note, k) != nil {
		t.Errorf("the note of one version of the zone gives a cover in another")
	}
	// An edit keeps the records it leaves alone, at the same places up to
	// one it adds: one between the note's record and the name's hash
	// covers the name in the new version, where the note names the old.
	h := dns.HashName(name, dns.SHA1, 0, "CAFE")
	between := h[:len(h)-1] + string(h[len(h)-1]-1)
	b := z.Edit()
	must(t, b.Add(mustRR(t, between+".nsec3.test. 300 IN NSEC3 1 0 0 CAFE "+h+" A"), 0))
	edited, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if unsafe.Pointer(edited.nsec3[note.W]) != note.Q || edited.cover(k) == edited.nsec3[note.W] {
		t.Fatalf("the edit moved the note's record, or left it the cover: the test tests nothing")
	}
	if edited.warmedCover(note, k) != nil {
		t.Errorf("the note of one version of the zone gives a cover in an edit of it")
	}
	if n3 := zones[0].warmedCover(note, k); n3 != nil {
		t.Errorf("the note of nsec3.test gives a cover in example.org")
	}
	if got, want := warmedAnswer(t, z, other, dns.TypeA, note), warmedAnswer(t, z, other, dns.TypeA, nil); got != want {
		t.Errorf("%s answered with the note of %s:\n%s\nwant:\n%s", other, name, got, want)
	}
	for _, n := range []*ahead.Note{
		warmed(t, s, "www.nsec3.test.", dns.TypeA),                                  // a name the zone holds: its node's steps
		{Step: note.Step, P: note.P, Q: note.Q, W: note.W},                          // no check
		{Step: note.Step, P: note.P, Q: note.Q, W: uint64(len(z.nsec3)), V: note.V}, // past the chain
		{Step: note.Step, P: note.P, Q: nil, W: note.W, V: note.V},                  // another record than the index's
		{Step: coverStep2, P: note.P, Q: note.Q, W: note.W, V: note.V},              // not done
	} {
		if z.warmedCover(n, k) != nil {
			t.Errorf("%+v gives a cover", n)
		}
	}
	// The note of the next record along: the denial reads it.
	moved := *note
	moved.W = (note.W + 1) % uint64(len(z.nsec3))
	moved.Q = unsafe.Pointer(z.nsec3[moved.W])
	got := warmedAnswer(t, z, name, dns.TypeA, &moved)
	if !strings.Contains(got, z.nsec3[moved.W].hash) || got == warmedAnswer(t, z, name, dns.TypeA, nil) {
		t.Errorf("a note of %s naming record %d: the denial does not read it:\n%s", name, moved.W, got)
	}
}

// TestWarmedCoverNotOnATie: where a record's hash begins with the same
// eight characters as the name's, the prefixes do not tell which record
// covers it, and the note gives none; the denial hashes the name.
func TestWarmedCoverNotOnATie(t *testing.T) {
	const origin, name = "tie.test.", "absent.tie.test."
	h := dns.HashName(name, dns.SHA1, 0, "")
	apex := dns.HashName(origin, dns.SHA1, 0, "")
	var zone strings.Builder
	fmt.Fprintf(&zone, "$ORIGIN %s\n@ 300 SOA ns hostmaster 1 7200 3600 1209600 300\n", origin)
	fmt.Fprintf(&zone, "@ 300 RRSIG SOA 13 1 300 20460101000000 20260101000000 1 %s AAAA\n", origin)
	fmt.Fprintf(&zone, "@ 300 NS ns\n@ 300 DNSKEY 256 3 13 AAAA\nns 300 A 192.0.2.1\n@ 0 NSEC3PARAM 1 0 0 -\n")
	owners := []string{apex, h[:8] + strings.Repeat("0", 24), h[:8] + strings.Repeat("V", 24), "00000000" + h[8:], "VVVVVVVV" + h[8:]}
	for _, o := range owners {
		fmt.Fprintf(&zone, "%s 300 NSEC3 1 0 0 - %s A\n", o, apex)
	}
	z, err := Parse(strings.NewReader(zone.String()), origin, "")
	if err != nil {
		t.Fatal(err)
	}
	if !z.Signed() || len(z.nsec3) != len(owners) {
		t.Fatalf("the zone: signed %v, %d NSEC3 records, want %d", z.Signed(), len(z.nsec3), len(owners))
	}
	s := NewStore()
	must(t, s.Publish(nil, z, false))
	note := warmed(t, s, name, dns.TypeA)
	k, _ := key(name)
	if note.V != 0 || z.warmedCover(note, k) != nil {
		t.Fatalf("a tie of prefixes: the note gives a cover: %+v", note)
	}
	if want := z.cover(k); !strings.HasPrefix(want.hash, h[:8]) {
		t.Fatalf("%s is covered by %s: the test tests no tie", name, want.hash)
	}
	if got, want := warmedAnswer(t, z, name, dns.TypeA, note), warmedAnswer(t, z, name, dns.TypeA, nil); got != want {
		t.Fatalf("warmed:\n%s\nwant:\n%s", got, want)
	}
	// Without the tie, the same name's note gives its cover.
	var untied strings.Builder
	for _, l := range strings.SplitAfter(zone.String(), "\n") {
		if !strings.HasPrefix(l, h[:8]) {
			untied.WriteString(l)
		}
	}
	z2, err := Parse(strings.NewReader(untied.String()), origin, "")
	if err != nil {
		t.Fatal(err)
	}
	s2 := NewStore()
	must(t, s2.Publish(nil, z2, false))
	if note := warmed(t, s2, name, dns.TypeA); z2.warmedCover(note, k) == nil {
		t.Fatalf("no tie: the note gives no cover: %+v", note)
	}
}
