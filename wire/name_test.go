package wire

import (
	"strings"
	"testing"
)

// TestScanPlainMatchesIndex checks that the fused scan of a plain name
// gives what appendName and index give for it: the same wire form, the same
// lowercased key, labels and suffix hashes (names that fallback records
// bring in are indexed from their wire form, and must meet the same
// suffixes), and an error exactly where appendName has one.
func TestScanPlainMatchesIndex(t *testing.T) {
	cases := []string{
		"a.", "org.", "Example.ORG.", "www.example.org.", "ns1.sub.Example.org.",
		"abcdefg.", "abcdefgh.", "abcdefghi.", "a.bcdefghijklmno.pq.",
		strings.Repeat("x", 63) + ".", strings.Repeat("Yz", 31) + "Q.example.org.",
		strings.Repeat("a.", 127), strings.Repeat("abc.", 63), "2vptu5timamqttgl4luu9kg21e0aor3s.nsec3.test.",
		"x-y_z.0-9.@.", "\xff\x80.\x7f.",
		// invalid
		"", "a", "a..", ".a.", "a..b.", "org", strings.Repeat("x", 64) + ".", strings.Repeat("a.", 128),
		strings.Repeat("abcd.", 51), "abc.def",
	}
	for _, s := range cases {
		var a, b names
		a.init()
		b.init()
		want, errWant := appendName([]byte{0xAA}, s)
		got, nl, errGot := b.scanPlain([]byte{0xAA}, s)
		if errGot == nil {
			b.hashPlain(got[1:], s, nl)
		}
		if (errWant == nil) != (errGot == nil) {
			t.Errorf("%q: appendName says %v, scanPlain says %v", s, errWant, errGot)
			continue
		}
		if errWant != nil {
			continue
		}
		if string(got) != string(want) {
			t.Errorf("%q: wire form % x, want % x", s, got, want)
			continue
		}
		wantNL := a.index(want[1:])
		if nl != wantNL {
			t.Errorf("%q: %d labels, want %d", s, nl, wantNL)
			continue
		}
		n := len(want) - 1
		if string(b.lower[:n]) != string(a.lower[:n]) {
			t.Errorf("%q: key % x, want % x", s, b.lower[:n], a.lower[:n])
		}
		for j := 0; j < nl; j++ {
			if b.labels[j] != a.labels[j] || b.hashes[j] != a.hashes[j] {
				t.Errorf("%q: label %d at %d hash %x, want at %d hash %x", s, j, b.labels[j], b.hashes[j], a.labels[j], a.hashes[j])
			}
		}
	}
}

// TestSuffixHashIgnoresCase checks that a suffix hashes alike in any case
// and in any name it ends, whichever path indexed it.
func TestSuffixHashIgnoresCase(t *testing.T) {
	var a, b names
	a.init()
	b.init()
	w0, nl, err := a.scanPlain(nil, "www.Example.ORG.")
	if err != nil || nl != 3 {
		t.Fatal(nl, err)
	}
	a.hashPlain(w0, "www.Example.ORG.", nl)
	w, _ := appendName(nil, "A.LONGER-LABEL-HERE.example.org.")
	if b.index(w) != 4 {
		t.Fatal("labels")
	}
	if a.hashes[1] != b.hashes[2] || a.hashes[2] != b.hashes[3] {
		t.Errorf("example.org. hashes %x %x, org. %x %x", a.hashes[1], b.hashes[2], a.hashes[2], b.hashes[3])
	}
}
