package zonestore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus/testutil"
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
