package zonestore

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ontimedns/ontime/zonestore"
	"github.com/ontimedns/ontime/zonestore/secondary"
)

// TestAReloadForgetsADroppedCatalog: a catalog the new configuration no
// longer has loses its members gauge; one it keeps keeps it.
func TestAReloadForgetsADroppedCatalog(t *testing.T) {
	catalogMembersGauge.Reset()
	catalogMembersGauge.WithLabelValues("gone.invalid.").Set(3)
	catalogMembersGauge.WithLabelValues("kept.invalid.").Set(5)
	prev := &carried{cats: &catalogs{members: map[string]map[string]bool{"gone.invalid.": {}, "kept.invalid.": {}}}}
	h := &Handler{}
	h.secs.put(map[string]*member{"kept.invalid.": {catalog: true}})
	prev.forgetCatalogs(h)
	if n := testutil.CollectAndCount(catalogMembersGauge); n != 1 || testutil.ToFloat64(catalogMembersGauge.WithLabelValues("kept.invalid.")) != 5 {
		t.Fatalf("%d series left, want kept.invalid.'s alone", n)
	}
}

// TestCatalogFailuresLogAMinute: a catalog's members' failures log the
// first at once, then a line a minute that counts those since.
func TestCatalogFailuresLogAMinute(t *testing.T) {
	at := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	var lines []string
	f := &failureLog{catalog: "cat.invalid.", now: func() time.Time { return at }, errorf: func(format string, args ...any) {
		lines = append(lines, fmt.Sprintf(format, args...))
	}}
	for i := range 1000 { // a primary gone, 1,000 members failing in 30 s
		at = at.Add(30 * time.Millisecond)
		f.logf("Transfer (soa) of zone %q failed", fmt.Sprintf("m%d.test.", i))
	}
	at = at.Add(31 * time.Second)
	f.logf("Transfer (soa) of zone %q failed", "m0.test.")
	want := []string{
		`Transfer (soa) of zone "m0.test." failed`,
		`Catalog zone "cat.invalid.": 1000 more member failures since 2026-12-07T12:00:00Z; the latest: Transfer (soa) of zone "m0.test." failed`,
	}
	if strings.Join(lines, "\n") != strings.Join(want, "\n") {
		t.Fatalf("logged:\n%s\nwant:\n%s", strings.Join(lines, "\n"), strings.Join(want, "\n"))
	}
}

// TestKeptMembersAreVerified: the members a catalog named before a
// Corefile reload are checked as the catalog's settings say, zonemd_verify
// included (they were not: keepMembers made their settings without it).
// A member's saved copy, loaded as it is scheduled, goes through the check.
func TestKeptMembersAreVerified(t *testing.T) {
	dir := storage(t.TempDir())
	copyText := "m.test. 300 IN SOA ns1.m.test. h.m.test. 1 3600 1 600 300\nm.test. 300 IN NS ns1.m.test.\nns1.m.test. 300 IN A 192.0.2.53\n; the end of the copy: 3 records\n"
	if err := os.WriteFile(dir.file("m.test."), []byte(copyText), 0o644); err != nil {
		t.Fatal(err)
	}
	var verified []string
	catalog := secondary.Config{Origin: "catalog.invalid.", Primaries: []string{"127.0.0.1:9"},
		Verify: func(z *zonestore.Zone) error { verified = append(verified, z.Origin()); return errors.New("no digest") }}
	h := &Handler{store: zonestore.NewStore(), history: &history{}}
	h.secs.workers = 1
	h.secs.start()
	defer h.secs.stopAll()
	h.keepMembers(catalog, dir, []string{"m.test."})
	if strings.Join(verified, " ") != "m.test." || h.store.Get("m.test.") != nil {
		t.Fatalf("verified %v, served %v: want the copy checked, and refused", verified, h.store.Get("m.test.") != nil)
	}
}
