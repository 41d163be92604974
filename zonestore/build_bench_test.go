package zonestore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ontimedns/ontime/bench/workload"
)

// BenchmarkBuild170k measures building a 170,000-name zone, what each swap of a large zone costs its writer.
func BenchmarkBuild170k(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		genZone(b, "example.", 170000, uint32(i+1))
	}
}

// BenchmarkEdit170k measures making the next version of a 170,000-name zone
// that changes six names (the SOA and five others), what a swap costs when
// versions share all but a few names.
func BenchmarkEdit170k(b *testing.B) {
	const origin = "example."
	cur := genZone(b, origin, 170000, 1, versionNames(1, origin)...)
	b.ReportAllocs()
	b.ResetTimer()
	for v := 2; b.Loop(); v++ {
		cur = nextVersion(b, cur, v, origin)
	}
}

// BenchmarkReparse170k measures re-reading a changed 170,000-name file
// (the serial and one record) into the next version, as a reload does:
// built as an edit of the version before it. BenchmarkParse170k is the
// same file parsed and built whole.
func BenchmarkReparse170k(b *testing.B) {
	text := workload.Zone(170000)
	cur, err := Parse(strings.NewReader(text), workload.Origin, "")
	if err != nil {
		b.Fatal(err)
	}
	next := strings.Replace(strings.Replace(text, "hostmaster 1 ", "hostmaster 2 ", 1), "host5 A", "host5 60 A", 1)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := cur.Reparse(strings.NewReader(next), ""); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkReparseText170k: the same re-read of a zone that kept its
// file's text (ParseFile does): only the changed records are parsed.
func BenchmarkReparseText170k(b *testing.B) {
	cur, next := reparseCase(b)
	benchReparse(b, func() (*Zone, error) { return cur.Reparse(strings.NewReader(next), "") })
}

// BenchmarkReparseFile170k is BenchmarkReparseText170k from a file, as
// zonestore's reload reads it: one buffer of the file's size, where
// Reparse's io.ReadAll grows one.
func BenchmarkReparseFile170k(b *testing.B) {
	cur, next := reparseCase(b)
	path := filepath.Join(b.TempDir(), "db.bench")
	if err := os.WriteFile(path, []byte(next), 0o644); err != nil {
		b.Fatal(err)
	}
	benchReparse(b, func() (*Zone, error) { return cur.ReparseFile(path) })
}

// reparseCase is the 170,000-name zone parsed with its text kept, and its
// next file: the serial bumped and one record changed.
func reparseCase(b *testing.B) (*Zone, string) {
	text := workload.Zone(170000)
	cur, err := Parse(strings.NewReader(text), workload.Origin, "")
	if err != nil {
		b.Fatal(err)
	}
	cur.keepText([]byte(text), nil)
	return cur, strings.Replace(strings.Replace(text, "hostmaster 1 ", "hostmaster 2 ", 1), "host5 A", "host5 60 A", 1)
}

// benchReparse runs reparse as the benchmark's loop; each version must
// have been compared as text.
func benchReparse(b *testing.B, reparse func() (*Zone, error)) {
	b.ReportAllocs()
	for b.Loop() {
		z, err := reparse()
		if err != nil {
			b.Fatal(err)
		}
		if z.keptText() == nil {
			b.Fatal("not compared as text")
		}
	}
}

func BenchmarkParse170k(b *testing.B) {
	text := workload.Zone(170000)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Parse(strings.NewReader(text), workload.Origin, ""); err != nil {
			b.Fatal(err)
		}
	}
}
