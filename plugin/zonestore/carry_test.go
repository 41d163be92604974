package zonestore

import (
	"testing"

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
