package zonestore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ontimedns/ontime/zonestore"
)

// TestHistoryDropsReplacedText: the versions held for IXFR keep no file
// text; only the latest, the one re-read next, does.
func TestHistoryDropsReplacedText(t *testing.T) {
	var b strings.Builder
	b.WriteString("$ORIGIN example.org.\n$TTL 300\n@ SOA ns hostmaster %d 3600 600 86400 300\n@ NS ns\nns A 192.0.2.53\n")
	for i := range 5000 { // past the size from which a file's text is kept
		fmt.Fprintf(&b, "host%d A 192.0.2.%d\n", i, i%250+1)
	}
	path := filepath.Join(t.TempDir(), "db.example.org")
	var hs history
	var versions []*zonestore.Zone
	for serial := 1; serial <= 3; serial++ {
		if err := os.WriteFile(path, fmt.Appendf(nil, b.String(), serial), 0o644); err != nil {
			t.Fatal(err)
		}
		z, err := zonestore.ParseFile(path, "example.org.")
		if err != nil {
			t.Fatal(err)
		}
		if !z.HoldsText() {
			t.Fatalf("version %d keeps no text", serial)
		}
		hs.add(z)
		versions = append(versions, z)
	}
	for i, z := range versions {
		if latest := i == len(versions)-1; z.HoldsText() != latest {
			t.Errorf("version %d holds its text: %v, want %v", i+1, z.HoldsText(), latest)
		}
	}
	if got := hs.since("example.org.", 1); len(got) != 3 {
		t.Fatalf("IXFR from serial 1: %d versions held, want 3", len(got))
	}
}
