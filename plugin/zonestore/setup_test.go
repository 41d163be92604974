package zonestore

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"

	"github.com/ontimedns/ontime/zonestore/secondary"
)

// TestSetupTakesFileSyntax: every form stock file accepts is accepted, with
// the same meaning, and the same mistakes are refused.
func TestSetupTakesFileSyntax(t *testing.T) {
	// Relative names, no $ORIGIN: one file can serve several origins.
	zone := t.TempDir() + "/db.any"
	if err := os.WriteFile(zone, []byte("@ 300 SOA ns1 hm 1 2 3 4 5\n@ 300 NS ns1\nns1 300 A 192.0.2.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		input    string
		origins  []string
		interval time.Duration
		byMtime  bool
	}{
		{"zonestore " + zone, []string{"example.org."}, time.Minute, false},
		{"zonestore " + zone + " example.org", []string{"example.org."}, time.Minute, false},
		{"zonestore " + zone + " example.org example.net", []string{"example.org.", "example.net."}, time.Minute, false},
		{"zonestore " + zone + " {\n reload 5s\n}", []string{"example.org."}, 5 * time.Second, false},
		{"zonestore " + zone + " {\n reload 0\n reload_by_mtime\n upstream\n fallthrough\n}", []string{"example.org."}, 0, true},
		{"zonestore /nonexistent/db.example.org", []string{"example.org."}, time.Minute, false}, // retried, as file does
	} {
		c := caddy.NewTestController("dns", tc.input)
		c.ServerBlockKeys = []string{"example.org."}
		h, err := parse(c)
		if err != nil {
			t.Fatalf("%q: %v", tc.input, err)
		}
		sources := h.sources
		if strings.Join(h.origins, " ") != strings.Join(tc.origins, " ") || len(sources) != len(tc.origins) {
			t.Fatalf("%q: origins %v, want %v", tc.input, h.origins, tc.origins)
		}
		if sources[0].interval != tc.interval || sources[0].byMtime != tc.byMtime {
			t.Fatalf("%q: reload %v by mtime %v", tc.input, sources[0].interval, sources[0].byMtime)
		}
	}
	for _, bad := range []string{
		"zonestore",
		"zonestore " + zone + " {\n reload\n}",
		"zonestore " + zone + " {\n reload 5x\n}",
		"zonestore " + zone + " {\n reload -1s\n}",
		"zonestore " + zone + " {\n nonsense\n}",
		"zonestore " + zone + " {\n replay\n}",
		"zonestore " + zone + " {\n replay -1\n}",
		"zonestore " + zone + " {\n replay many\n}",
		"zonestore " + zone + " {\n replay 1 2\n}",
		"zonestore " + zone + " {\n replay 16777217\n}",
		"zonestore " + zone + " {\n zonemd_verify yes\n}",
		"zonestore " + zone + " {\n zonemd_generate md5\n}",
		"zonestore " + zone + " {\n zonemd_generate sha384 sha512\n}",
		"zonestore " + zone + " {\n zonemd_verify\n}",           // the file has no ZONEMD record: fatal at startup, as a broken file
		"zonestore /nonexistent/db.example.org {\n reload 0\n}", // a missing file that is never retried is fatal
	} {
		c := caddy.NewTestController("dns", bad)
		c.ServerBlockKeys = []string{"example.org."}
		if _, err := parse(c); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestSetupTakesAutoDirectorySyntax: `directory DIR [REGEXP TEMPLATE]` as
// the auto plugin reads it, the block's arguments then being zones.
func TestSetupTakesAutoDirectorySyntax(t *testing.T) {
	dir := t.TempDir()
	os.WriteFile(dir+"/db.example.org", []byte("$ORIGIN example.org.\n@ 300 SOA ns1 hm 1 2 3 4 5\n@ 300 NS ns1\nns1 300 A 192.0.2.1\n"), 0o644)
	os.WriteFile(dir+"/example.net.zone", []byte("$ORIGIN example.net.\n@ 300 SOA ns1 hm 1 2 3 4 5\n@ 300 NS ns1\nns1 300 A 192.0.2.1\n"), 0o644)
	for _, tc := range []struct {
		input string
		zones []string // served after the first scan
	}{
		{"zonestore {\n directory " + dir + "\n}", []string{"example.org."}},
		{"zonestore {\n directory " + dir + ` (.*)\.zone {1}` + "\n}", []string{"example.net."}},
		{"zonestore example.net {\n directory " + dir + "\n}", nil}, // example.org is outside the block's zones
		{"zonestore . {\n directory " + dir + "\n reload 0\n}", []string{"example.org."}},
	} {
		c := caddy.NewTestController("dns", tc.input)
		c.ServerBlockKeys = []string{"."}
		h, err := parse(c)
		if err != nil {
			t.Fatalf("%q: %v", tc.input, err)
		}
		if len(h.dirs) != 1 || !h.Ready() {
			t.Fatalf("%q: %d directories, ready %v", tc.input, len(h.dirs), h.Ready())
		}
		for _, z := range []string{"example.org.", "example.net."} {
			want := false
			for _, w := range tc.zones {
				want = want || w == z
			}
			if got := h.store.Get(z) != nil; got != want || h.serves(z) != want {
				t.Errorf("%q: serves %s: %v, want %v", tc.input, z, got, want)
			}
		}
	}
	for _, bad := range []string{
		"zonestore {\n directory\n}",
		"zonestore {\n directory " + dir + " (.*)\n}",       // a regexp without its template
		"zonestore {\n directory " + dir + " db\\.x {1}\n}", // no subexpression
		"zonestore {\n directory " + dir + " ( {1}\n}",      // not a regexp
		"zonestore {\n reload 1s\n}",                        // neither file nor directory
	} {
		c := caddy.NewTestController("dns", bad)
		c.ServerBlockKeys = []string{"."}
		if _, err := parse(c); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestSetupTakesSecondaries: `secondary ZONE PRIMARY...`, `tsig NAME
// SECRET [ALGORITHM]` and `transfers N`; nothing is transferred before
// the server starts, and a name of a zone not yet transferred is known
// as pending, however deep and in whatever case.
func TestSetupTakesSecondaries(t *testing.T) {
	c := caddy.NewTestController("dns", "zonestore {\n secondary example.org 127.0.0.1:5300 [::1]\n secondary example.net 192.0.2.1\n catalog catalog.invalid 192.0.2.1\n tsig xfr. c2VjcmV0 hmac-sha512\n transfers 4\n}")
	c.ServerBlockKeys = []string{"."}
	h, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	if len(h.secs.load()) != 3 || h.secs.get("example.org.") == nil || !h.secs.get("catalog.invalid.").catalog || h.Ready() {
		t.Fatalf("secondaries %v, ready %v", h.secs.load(), h.Ready())
	}
	if !h.serves("example.net.") || h.serves("catalog.invalid.") || h.pendingSecondary("www.example.org.") == nil || h.pendingSecondary("example.com.") != nil {
		t.Fatal("a secondary not yet transferred is not known as the block's")
	}
	if h.pendingSecondary("a.b.WWW.Example.ORG.") != h.secs.get("example.org.").zone || h.pendingSecondary("example.net.") != h.secs.get("example.net.").zone ||
		h.pendingSecondary("x.catalog.invalid.") != nil || h.pendingSecondary(".") != nil || h.pendingSecondary("org.") != nil {
		t.Fatal("pendingSecondary: the zone above a name, not yet transferred")
	}
	if h.secs.workers != 4 {
		t.Fatalf("transfers 4: %d workers", h.secs.workers)
	}
	if got := h.secs.get("example.org.").zone.Limits(); got != limitsDefault {
		t.Fatalf("limits by default: %+v, want %+v", got, limitsDefault)
	}

	// refresh, retry, expire and max_records: every secondary and catalog
	// zone of the block, and the catalogs' members, take them.
	c = caddy.NewTestController("dns", "zonestore {\n secondary example.org 127.0.0.1\n catalog catalog.invalid 192.0.2.1\n refresh 5m 24h\n retry 30s\n expire 1h 0\n max_records 1000\n max_transfer_time 30m\n}")
	c.ServerBlockKeys = []string{"."}
	if h, err = parse(c); err != nil {
		t.Fatal(err)
	}
	want := secondary.Limits{Refresh: secondary.Bounds{Min: 5 * time.Minute, Max: 24 * time.Hour}, Retry: secondary.Bounds{Min: 30 * time.Second},
		Expire: secondary.Bounds{Min: time.Hour}, MaxRecords: 1000, TransferTime: 30 * time.Minute}
	for _, o := range []string{"example.org.", "catalog.invalid."} {
		if got := h.secs.get(o).zone.Limits(); got != want {
			t.Errorf("%s: limits %+v, want %+v", o, got, want)
		}
	}
	if got := h.catalogMember("catalog.invalid.", h.memberSettings(secondary.Config{Origin: "catalog.invalid.", Limits: want}), "", "m.test.").zone.Limits(); got != want {
		t.Errorf("a catalog's member: limits %+v, want its catalog's %+v", got, want)
	}

	for _, bad := range []string{
		"zonestore {\n secondary example.org 127.0.0.1\n refresh\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n refresh 1m 1h 1d\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n refresh often\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n retry -1s\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n expire 1h 1m\n}", // the most below the least
		"zonestore {\n secondary example.org 127.0.0.1\n max_records\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n max_records -1\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n max_records lots\n}",
		"zonestore {\n directory " + t.TempDir() + "\n refresh 1m\n}",     // no secondary zone
		"zonestore {\n directory " + t.TempDir() + "\n max_records 10\n}", // no secondary zone
		"zonestore {\n secondary example.org 127.0.0.1\n max_transfer_time\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n max_transfer_time soon\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n max_transfer_time -1m\n}",

		"zonestore {\n secondary example.org\n}",                       // no primary
		"zonestore {\n secondary example.org 127.0.0.1:x\n}",           // bad address
		"zonestore {\n secondary example.org 127.0.0.1\n tsig xfr.\n}", // no secret
		"zonestore {\n tsig xfr. c2VjcmV0\n}",                          // tsig without secondaries
		"zonestore {\n secondary bad..name 127.0.0.1\n}",               // not a zone
		"zonestore {\n secondary example.org 127.0.0.1\n transfers\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n transfers 0\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n transfers many\n}",
		"zonestore {\n directory " + t.TempDir() + "\n transfers 4\n}", // no secondary zone
	} {
		c := caddy.NewTestController("dns", bad)
		c.ServerBlockKeys = []string{"."}
		if _, err := parse(c); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}

// TestSetupTakesReplay: answers the server keeps packed, 2^19 by default
// whatever its cores; replay 0 keeps none.
func TestSetupTakesReplay(t *testing.T) {
	zone := t.TempDir() + "/db.any"
	if err := os.WriteFile(zone, []byte("@ 300 SOA ns1 hm 1 2 3 4 5\n@ 300 NS ns1\nns1 300 A 192.0.2.1\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for input, want := range map[string]int{
		"zonestore " + zone:                       replaySize,
		"zonestore " + zone + " {\n replay 64\n}": 64,
		"zonestore " + zone + " {\n replay 0\n}":  0,
	} {
		c := caddy.NewTestController("dns", input)
		c.ServerBlockKeys = []string{"example.org."}
		h, err := parse(c)
		if err != nil {
			t.Fatalf("%q: %v", input, err)
		}
		got := 0
		if h.replays != nil {
			got = h.replays.size
		}
		if got != want {
			t.Errorf("%q: %d answers kept, want %d", input, got, want)
		}
	}
}

// TestSetupTakesStorage: `storage DIR` is made where it is missing and
// given to every secondary and catalog zone of the block, each its own
// file; a directory that cannot be written, or storage without a
// secondary zone to save, is refused at setup.
func TestSetupTakesStorage(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "made", "here")
	c := caddy.NewTestController("dns", "zonestore {\n secondary Example.ORG 127.0.0.1\n catalog catalog.invalid 127.0.0.1\n storage "+dir+"\n}")
	c.ServerBlockKeys = []string{"."}
	if _, err := parse(c); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(dir); err != nil || !fi.IsDir() {
		t.Fatalf("storage not made: %v", err)
	}
	s := storage(dir)
	for origin, want := range map[string]string{
		"Example.ORG.":    "example.org.zone",
		".":               "root.zone",
		`a\.b/c.example.`: "a%5C.b%2Fc.example.zone", // a name from a catalog: no path of its own
		`\.\..example.`:   "%5C.%5C.%2Eexample.zone",
	} {
		if got := s.file(origin); got != filepath.Join(dir, want) {
			t.Errorf("%s: %s, want %s", origin, got, filepath.Join(dir, want))
		}
	}
	if got := storage("").file("example.org."); got != "" {
		t.Errorf("no storage: %q", got)
	}
	for _, bad := range []string{
		"zonestore {\n secondary example.org 127.0.0.1\n storage\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n storage a b\n}",
		"zonestore {\n secondary example.org 127.0.0.1\n storage /dev/null/x\n}", // cannot be made
		"zonestore {\n directory " + t.TempDir() + "\n storage " + dir + "\n}",   // no secondary zone
	} {
		c := caddy.NewTestController("dns", bad)
		c.ServerBlockKeys = []string{"."}
		if _, err := parse(c); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
}
