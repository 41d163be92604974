package zonestore

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/ontimedns/ontime/zonestore"
)

// BenchmarkDirectoryRescan100k: a rescan of a directory of 100,000 zone
// files, none changed: the walk that lists them and a stat a file (its
// stamp), nothing parsed.
//
//	go test -run XXX -bench DirectoryRescan100k -benchmem ./plugin/zonestore/
func BenchmarkDirectoryRescan100k(b *testing.B) {
	dir := b.TempDir()
	for i := range 100000 {
		origin := fmt.Sprintf("z%d.test.", i)
		text := "$ORIGIN " + origin + "\n@ 300 SOA ns1 hm 1 2 3 4 5\n@ 300 NS ns1\nns1 300 A 192.0.2.1\n"
		if err := os.WriteFile(filepath.Join(dir, "db."+origin[:len(origin)-1]), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	d, err := newDirectory(dir, "", "", []string{"."})
	if err != nil {
		b.Fatal(err)
	}
	d.published, d.gone = func(*zonestore.Zone) {}, func(string) {}
	store := zonestore.NewStore()
	d.scan(store)
	if n := len(*d.current.Load()); n != 100000 {
		b.Fatalf("%d zones after the first scan", n)
	}
	b.ReportAllocs()
	for b.Loop() {
		d.scan(store)
	}
}
