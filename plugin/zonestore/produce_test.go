package zonestore

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"testing"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

func writeZone(t *testing.T, path, origin string) {
	t.Helper()
	text := "$ORIGIN " + origin + "\n@ 300 SOA ns1 hm 1 2 3 4 5\n@ 300 NS ns1\nns1 300 A 192.0.2.1\n"
	if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestGeneratedCatalog: `generate_catalog` keeps a catalog zone (RFC 9432)
// of the block's file and directory zones, which ontime's own consumer
// reads (catalogMembers): version "2", a PTR a member, each node's label
// a hash of its zone's name. A scan that adds and removes a zone
// publishes an edit that changes those two nodes alone and a newer
// serial; nothing changed publishes nothing; a producer made again over
// the version held (a Corefile reload) keeps its labels and publishes
// nothing until the zones change.
func TestGeneratedCatalog(t *testing.T) {
	dir, files := t.TempDir(), t.TempDir()
	writeZone(t, filepath.Join(dir, "db.a.test"), "a.test.")
	writeZone(t, filepath.Join(dir, "db.b.test"), "b.test.")
	writeZone(t, filepath.Join(files, "example.org.zone"), "example.org.")
	c := caddy.NewTestController("dns", "zonestore "+filepath.Join(files, "example.org.zone")+" example.org\nzonestore {\n directory "+dir+"\n reload 0\n generate_catalog Catalog.Test\n}")
	c.ServerBlockKeys = []string{"."}
	h, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	h.catalog.update()
	if h.store.Get("catalog.test.") != nil {
		t.Fatal("a catalog published before the server started")
	}
	h.catalog.start()
	v1 := h.store.Get("catalog.test.")
	if v1 == nil {
		t.Fatal("no catalog published")
	}
	members := membersOf(t, v1, "a.test.", "b.test.", "example.org.")
	hex16 := regexp.MustCompile(`^[0-9a-f]{16}$`)
	for m, l := range members {
		if !hex16.MatchString(l) || l != memberLabel(m, nil) {
			t.Errorf("%s labelled %q, want its name's hash", m, l)
		}
	}
	if !h.serves("catalog.test.") {
		t.Error("the catalog is not served for transfer")
	}

	h.catalog.update() // nothing changed
	if h.store.Get("catalog.test.") != v1 {
		t.Fatal("a version published with the same zones")
	}

	os.Remove(filepath.Join(dir, "db.a.test"))
	writeZone(t, filepath.Join(dir, "db.c.test"), "c.test.")
	h.dirs[0].scan(h.store)
	h.catalog.update()
	v2 := h.store.Get("catalog.test.")
	after := membersOf(t, v2, "b.test.", "c.test.", "example.org.")
	if after["b.test."] != members["b.test."] || after["example.org."] != members["example.org."] {
		t.Errorf("labels changed: %v, then %v", members, after)
	}
	if !zonestore.SerialNewer(v2.Serial(), v1.Serial()) {
		t.Errorf("serial %d after %d", v2.Serial(), v1.Serial())
	}
	del, add := zonestore.Diff(v1, v2)
	if len(del) != 1 || len(add) != 1 || del[0].(*dns.PTR).Ptr != "a.test." || add[0].(*dns.PTR).Ptr != "c.test." {
		t.Errorf("the edit deleted %v and added %v, want a.test's node for c.test's", del, add)
	}

	// A Corefile reload: a new handler over the store, its producer new.
	c = caddy.NewTestController("dns", "zonestore "+filepath.Join(files, "example.org.zone")+" example.org\nzonestore {\n directory "+dir+"\n reload 0\n generate_catalog catalog.test\n}")
	c.ServerBlockKeys = []string{"."}
	h2, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	h2.store = h.store
	h2.catalog.start()
	if h2.store.Get("catalog.test.") != v2 {
		t.Fatal("a new producer published a version with the same zones")
	}
	os.Remove(filepath.Join(dir, "db.b.test"))
	h2.dirs[0].scan(h2.store)
	h2.catalog.update()
	v3 := h2.store.Get("catalog.test.")
	if final := membersOf(t, v3, "c.test.", "example.org."); final["c.test."] != after["c.test."] {
		t.Errorf("c.test relabelled after the reload: %q, was %q", final["c.test."], after["c.test."])
	}
	if del, add := zonestore.Diff(v2, v3); len(del) != 1 || len(add) != 0 {
		t.Errorf("the edit after the reload deleted %v and added %v, want b.test's node alone", del, add)
	}
}

// TestGeneratedCatalogNamesAFileLoadedLate: a zone file missing when the
// block is set up is named by the catalog once it loads.
func TestGeneratedCatalogNamesAFileLoadedLate(t *testing.T) {
	dir := t.TempDir()
	writeZone(t, filepath.Join(dir, "a.test.zone"), "a.test.")
	late := filepath.Join(dir, "late.test.zone")
	c := caddy.NewTestController("dns", "zonestore "+filepath.Join(dir, "a.test.zone")+" a.test\nzonestore "+late+" late.test {\n reload 1m\n generate_catalog catalog.test\n}")
	c.ServerBlockKeys = []string{"."}
	h, err := parse(c)
	if err != nil {
		t.Fatal(err)
	}
	h.catalog.start()
	membersOf(t, h.store.Get("catalog.test."), "a.test.")
	writeZone(t, late, "late.test.")
	if err := h.sources[1].load(h.store); err != nil {
		t.Fatal(err)
	}
	membersOf(t, h.store.Get("catalog.test."), "a.test.", "late.test.")
}

// membersOf reads the members of catalog z as ontime's consumer does and
// checks they are want.
func membersOf(t *testing.T, z *zonestore.Zone, want ...string) map[string]string {
	t.Helper()
	members, _, err := catalogMembers(z)
	if err != nil {
		t.Fatalf("catalog serial %d: %v", z.Serial(), err)
	}
	if len(members) != len(want) {
		t.Fatalf("catalog serial %d names %v, want %v", z.Serial(), members, want)
	}
	for _, w := range want {
		if _, ok := members[w]; !ok {
			t.Fatalf("catalog serial %d names %v, want %v", z.Serial(), members, want)
		}
	}
	return members
}

// TestMemberLabelCollision: a member whose label another has is given
// its name's whole hash.
func TestMemberLabelCollision(t *testing.T) {
	short := memberLabel("a.test.", nil)
	if long := memberLabel("a.test.", map[string]bool{short: true}); len(long) != 64 || long[:16] != short {
		t.Errorf("label %q beside %q", long, short)
	}
}

// TestSetupRefusesGenerateCatalog: generate_catalog needs file or
// directory zones, one catalog a block, a name within the block and not
// served otherwise.
func TestSetupRefusesGenerateCatalog(t *testing.T) {
	dir := t.TempDir()
	writeZone(t, filepath.Join(dir, "example.org.zone"), "example.org.")
	file := filepath.Join(dir, "example.org.zone")
	for _, bad := range []string{
		"zonestore {\n secondary example.net 127.0.0.1\n generate_catalog catalog.test\n}",                   // no file or directory zones
		"zonestore " + file + " example.org {\n generate_catalog catalog.test\n generate_catalog c2.test\n}", // two
		"zonestore " + file + " example.org {\n generate_catalog example.org\n}",                             // a zone of its own
		"zonestore " + file + " example.org {\n generate_catalog\n}",
		"zonestore {\n directory " + dir + "\n generate_catalog catalog.test\n secondary catalog.test 127.0.0.1\n}",
	} {
		c := caddy.NewTestController("dns", bad)
		c.ServerBlockKeys = []string{"."}
		if _, err := parse(c); err == nil {
			t.Errorf("%q: want an error", bad)
		}
	}
	c := caddy.NewTestController("dns", "zonestore "+file+" example.org {\n generate_catalog catalog.test\n}")
	c.ServerBlockKeys = []string{"example.org."}
	if _, err := parse(c); err == nil {
		t.Error("a catalog outside the block's zones: want an error")
	}
}

// BenchmarkGeneratedCatalog100k: the catalog of 100,000 zones: built
// whole (a start with no version held), checked after a scan that
// changed nothing, and edited for one zone added or removed.
//
//	go test -run XXX -bench GeneratedCatalog100k -benchmem ./plugin/zonestore/
func BenchmarkGeneratedCatalog100k(b *testing.B) {
	h := &Handler{store: zonestore.NewStore(), history: &history{}}
	rrs := func(origin string) []dns.RR {
		var out []dns.RR
		for _, s := range []string{origin + " 300 SOA ns1." + origin + " hm." + origin + " 1 2 3 4 5", origin + " 300 NS ns1." + origin, "ns1." + origin + " 300 A 192.0.2.1"} {
			rr, _ := dns.NewRR(s)
			out = append(out, rr)
		}
		return out
	}
	var changes []zonestore.Change
	for i := range 100001 {
		origin := fmt.Sprintf("z%d.test.", i)
		zb, _ := zonestore.NewBuilder(origin, "")
		for _, rr := range rrs(origin) {
			zb.Add(rr, 0)
		}
		z, err := zb.Build()
		if err != nil {
			b.Fatal(err)
		}
		changes = append(changes, zonestore.Change{New: z, Force: true})
		h.origins = append(h.origins, origin)
	}
	h.store.PublishAll(changes) // one copy of the store's index for all
	all := h.origins
	h.origins = all[:100000] // the last comes and goes
	p := &producer{origin: "catalog.test.", h: h}
	p.started.Store(true)
	b.Run("whole", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			h.store.RemoveAll([]string{p.origin})
			p.labels = nil
			p.update()
		}
	})
	b.Run("unchanged", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			p.update()
		}
	})
	b.Run("one-zone", func(b *testing.B) {
		b.ReportAllocs()
		for i := 0; b.Loop(); i++ {
			h.origins = all[:100000+(i+1)%2]
			p.update()
		}
	})
}
