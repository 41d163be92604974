package zonestore

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// bigZone is a file past textMinBytes, so that its text is kept. Without
// $TTL its records inherit the last TTL written; names own several records
// on lines that start with a blank, and the SOA spans lines.
func bigZone(withTTL bool) []string {
	lines := []string{"; a zone to compare as text", "$ORIGIN example.org."}
	if withTTL {
		lines = append(lines, "$TTL 3600")
	}
	lines = append(lines,
		"@ 3600 IN SOA ns1 hostmaster (",
		"        1    ; serial",
		"        7200 3600 1209600 300 )",
		"@ NS ns1", "ns1 A 192.0.2.53")
	for i := range 3000 {
		switch i % 10 {
		case 0:
			lines = append(lines, fmt.Sprintf("h%d 300 A 192.0.2.%d", i, i%250))
		case 1:
			lines = append(lines, fmt.Sprintf("h%d IN 120 AAAA 2001:db8::%x", i, i))
		case 2:
			lines = append(lines, fmt.Sprintf("h%d A 192.0.2.%d", i, i%250), `    TXT "one; not a comment" "two"`, "    MX 10 mail")
		default:
			lines = append(lines, fmt.Sprintf("h%d A 192.0.2.%d ; host %d", i, i%250, i))
		}
	}
	return append(lines, "mail A 192.0.2.25", "")
}

func joined(lines []string) []byte { return []byte(strings.Join(lines, "\n")) }

// textZone parses lines as ParseFile does: the text kept.
func textZone(t *testing.T, text []byte) *Zone {
	t.Helper()
	z, err := Parse(strings.NewReader(string(text)), "example.org.", "db.example.org")
	if err != nil {
		t.Fatal(err)
	}
	z.keepText(text, nil)
	if z.keptText() == nil {
		t.Fatalf("a %d-byte file kept no text", len(text))
	}
	return z
}

// sameAsParse fails unless got holds what a whole parse of text holds.
func sameAsParse(t *testing.T, what string, got *Zone, text []byte) {
	t.Helper()
	want, err := Parse(strings.NewReader(string(text)), "example.org.", "db.example.org")
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	if g, w := walked(got), walked(want); !slices.Equal(g, w) {
		for _, r := range g {
			if !slices.Contains(w, r) {
				t.Errorf("%s: has %s, a parse does not", what, r)
			}
		}
		for _, r := range w {
			if !slices.Contains(g, r) {
				t.Errorf("%s: lacks %s", what, r)
			}
		}
	}
	if got.Records() != want.Records() || got.Names() != want.Names() || got.Serial() != want.Serial() {
		t.Errorf("%s: %d records %d names serial %d, a parse %d %d %d", what,
			got.Records(), got.Names(), got.Serial(), want.Records(), want.Names(), want.Serial())
	}
}

// TestTextReparseIsParse: each change is applied by comparing text (the
// fast path is taken), and the version is what a whole parse gives: the
// records after a changed owner or TTL, which inherit it, change with it.
func TestTextReparseIsParse(t *testing.T) {
	for _, withTTL := range []bool{true, false} {
		base := bigZone(withTTL)
		find := func(prefix string) int {
			i := slices.IndexFunc(base, func(l string) bool { return strings.HasPrefix(l, prefix) })
			if i < 0 {
				t.Fatalf("no line %q", prefix)
			}
			return i
		}
		edit := func(f func(l []string) []string) []byte {
			l := f(slices.Clone(base))
			l[find("        1 ")] = "        2    ; serial"
			return joined(l)
		}
		for _, tc := range []struct {
			name string
			text []byte
		}{
			{"serial only", edit(func(l []string) []string { return l })},
			{"a record added", edit(func(l []string) []string { return append(l, "new TXT hello") })},
			{"a record removed", edit(func(l []string) []string { return slices.Delete(l, find("h5 "), find("h5 ")+1) })},
			{"an address changed", edit(func(l []string) []string { l[find("h7 ")] = "h7 A 192.0.2.77"; return l })},
			{"a comment changed", edit(func(l []string) []string { l[find("h8 ")] = "h8 A 192.0.2.8 ; renamed"; return l })},
			{"an owner that blanks repeat", edit(func(l []string) []string { l[find("h12 ")] = "h12b A 192.0.2.12"; return l })},
			{"a TTL that later records inherit", edit(func(l []string) []string { l[find("h10 ")] = "h10 60 A 192.0.2.10"; return l })},
			{"a class before the TTL", edit(func(l []string) []string { l[find("h11 ")] = "h11 IN 60 AAAA 2001:db8::b"; return l })},
			{"a name's spelling", edit(func(l []string) []string { l[find("h13 ")] = "H13 A 192.0.2.13"; return l })},
		} {
			old := textZone(t, joined(base))
			got, _ := old.reparseText(scanText(tc.text, nil), "db.example.org", nil)
			what := fmt.Sprintf("$TTL %v, %s", withTTL, tc.name)
			if got == nil {
				t.Errorf("%s: not compared as text", what)
				continue
			}
			sameAsParse(t, what, got, tc.text)
			// And the next re-read compares with this version's text.
			if again, _ := got.reparseText(scanText(edit(func(l []string) []string { return append(l, "later A 192.0.2.9") }), nil), "db", nil); again == nil {
				t.Errorf("%s: the next version was not compared as text", what)
			}
		}
	}
}

// TestTextReparseDeclines: what the text comparison cannot vouch for is
// parsed whole, and Reparse still gives what a parse gives.
func TestTextReparseDeclines(t *testing.T) {
	base := bigZone(true)
	bumped := func(l []string) []string {
		l = slices.Clone(l)
		l[slices.Index(l, "        1    ; serial")] = "        2    ; serial"
		return l
	}
	var many []string
	for i := range maxTextEdits + 1 {
		many = append(many, fmt.Sprintf("many%d A 192.0.2.1", i))
	}
	for _, tc := range []struct {
		name string
		text []byte
	}{
		{"a directive after the records", joined(append(bumped(base), "$ORIGIN sub.example.org.", "x A 192.0.2.1"))},
		{"a header changed", joined(append([]string{"$TTL 60"}, bumped(base)...))},
		{"a line written twice", joined(append(bumped(base), "mail A 192.0.2.25"))},
		{"two lines holding one record", joined(append(bumped(base), "mail 3600 A 192.0.2.25"))},
		{"more changes than the bound", joined(append(bumped(base), many...))},
		{"a parenthesis left open", joined(append(bumped(base), "x TXT ( open"))},
	} {
		old := textZone(t, joined(base))
		if got, _ := old.reparseText(scanText(tc.text, nil), "db.example.org", nil); got != nil {
			t.Errorf("%s: compared as text", tc.name)
		}
		got, err := old.Reparse(strings.NewReader(string(tc.text)), "db.example.org")
		if tc.name == "a parenthesis left open" {
			if err == nil {
				t.Errorf("%s: reparsed", tc.name)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		sameAsParse(t, tc.name, got, tc.text)
	}
	// A broken record is reported by the whole parse, with its line.
	broken := joined(append(bumped(base), "h1 3x A 192.0.2.1"))
	_, err := textZone(t, joined(base)).Reparse(strings.NewReader(string(broken)), "db.example.org")
	if e, ok := err.(*Error); !ok || e.Line != strings.Count(string(broken), "\n")+1 {
		t.Errorf("broken record: %v, want an error on the last line", err)
	}
}

// TestTextReparseRandomEdits: random edits of random lines, each version
// re-read from the one before, are always what a whole parse gives.
func TestTextReparseRandomEdits(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for _, withTTL := range []bool{true, false} {
		lines := bigZone(withTTL)
		cur := textZone(t, joined(lines))
		first := slices.Index(lines, "ns1 A 192.0.2.53") + 1
		asText := 0
		for round := range 40 {
			prev := lines
			lines = slices.Clone(lines)
			for range 1 + rng.IntN(8) {
				i := first + rng.IntN(len(lines)-first-1)
				switch rng.IntN(5) {
				case 0:
					lines = slices.Delete(lines, i, i+1)
				case 1:
					lines = slices.Insert(lines, i, fmt.Sprintf("r%d-%d A 192.0.2.%d", round, i, rng.IntN(250)))
				case 2:
					lines = slices.Insert(lines, i, fmt.Sprintf("    TXT \"r%d-%d\"", round, i))
				case 3:
					lines = slices.Insert(lines, i, fmt.Sprintf("t%d-%d %d A 192.0.2.1", round, i, 1+rng.IntN(999)))
				case 4:
					lines[i] = strings.Replace(lines[i], " A ", " 42 A ", 1)
				}
			}
			text := joined(lines)
			next, _ := cur.reparseText(scanText(text, nil), "db.example.org", nil)
			if next != nil {
				asText++
				sameAsParse(t, fmt.Sprintf("$TTL %v round %d", withTTL, round), next, text)
				cur = next
				continue
			}
			next, err := cur.Reparse(strings.NewReader(string(text)), "db.example.org")
			if err != nil {
				// An edit may make a line no zone may hold (a CNAME beside data,
				// say): a whole parse must refuse it too.
				if _, perr := Parse(strings.NewReader(string(text)), "example.org.", "db"); perr == nil {
					t.Fatalf("$TTL %v round %d: Reparse refused what Parse takes: %v", withTTL, round, err)
				}
				lines = prev // the next round edits the version served
				continue
			}
			sameAsParse(t, fmt.Sprintf("$TTL %v round %d", withTTL, round), next, text)
			cur = next
		}
		if asText < 30 {
			t.Errorf("$TTL %v: %d of 40 versions compared as text, want most", withTTL, asText)
		}
	}
}

// TestDiffUnitsIsTheSetDifference: whatever the edits (lines changed,
// added, removed, moved, runs longer than the resync window, both ends),
// what diffUnits removes from old and adds holds exactly cur's units.
func TestDiffUnitsIsTheSetDifference(t *testing.T) {
	rnd := rand.New(rand.NewPCG(7, 9))
	u := func(n int) unit { return unit{hash: unitHash{uint64(n), 0}} }
	for round := range 500 {
		n := 1 + rnd.IntN(400)
		var old []unit
		for k := range n {
			old = append(old, u(k))
		}
		cur := slices.Clone(old)
		next := n
		for range rnd.IntN(6) {
			switch at := rnd.IntN(len(cur) + 1); rnd.IntN(5) {
			case 0: // a line added
				cur = slices.Insert(cur, at, u(next))
				next++
			case 1: // a line removed
				if at < len(cur) {
					cur = slices.Delete(cur, at, at+1)
				}
			case 2: // a line changed
				if at < len(cur) {
					cur[at] = u(next)
					next++
				}
			case 3: // a run of new lines, longer than the window
				for range resyncWindow + rnd.IntN(10) {
					cur = slices.Insert(cur, min(at, len(cur)), u(next))
					next++
				}
			case 4: // a line moved elsewhere
				if at < len(cur) {
					m := cur[at]
					cur = slices.Delete(cur, at, at+1)
					cur = slices.Insert(cur, rnd.IntN(len(cur)+1), m)
				}
			}
		}
		added, removed, ok := diffUnits(old, cur, nil)
		if !ok {
			continue // past maxTextEdits: the caller parses whole
		}
		got := map[unitHash]bool{}
		for _, x := range old {
			got[x.hash] = true
		}
		for _, x := range removed {
			if !got[x.hash] {
				t.Fatalf("round %d: removed %v, not in old", round, x.hash)
			}
			delete(got, x.hash)
		}
		for _, x := range added {
			got[x.hash] = true
		}
		want := map[unitHash]bool{}
		for _, x := range cur {
			want[x.hash] = true
		}
		if !maps.Equal(got, want) {
			t.Fatalf("round %d: old - removed + added has %d units, cur %d", round, len(got), len(want))
		}
	}
}

// TestDropText: a version that let go of its text is re-read by parsing
// every record, to the same zone.
func TestDropText(t *testing.T) {
	base := bigZone(true)
	old := textZone(t, joined(base))
	if !old.HoldsText() {
		t.Fatal("a large file's text is not kept")
	}
	old.DropText()
	if old.HoldsText() {
		t.Fatal("the text is still held")
	}
	next := joined(append(slices.Clone(base), "dropped A 192.0.2.77"))
	got, err := old.Reparse(strings.NewReader(string(next)), "db.example.org")
	if err != nil {
		t.Fatal(err)
	}
	sameAsParse(t, "after DropText", got, next)
	if !got.HoldsText() {
		t.Error("the new version keeps no text for its own re-read")
	}
}
