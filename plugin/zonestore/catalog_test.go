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
	prev := &carried{cats: &catalogs{members: map[string]map[string]string{"gone.invalid.": {}, "kept.invalid.": {}}}}
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
	h.keepMembers(catalog, dir, map[string]string{"m.test.": "m"})
	if strings.Join(verified, " ") != "m.test." || h.store.Get("m.test.") != nil {
		t.Fatalf("verified %v, served %v: want the copy checked, and refused", verified, h.store.Get("m.test.") != nil)
	}
}

// catalogZone builds a catalog zone of origin from the lines after its
// head (SOA, NS), as a primary would serve it.
func catalogZone(t *testing.T, origin string, lines ...string) *zonestore.Zone {
	t.Helper()
	text := "$ORIGIN " + origin + "\n$TTL 0\n@ SOA invalid. invalid. 1 3600 600 2419200 0\n@ NS invalid.\n" + strings.Join(lines, "\n") + "\n"
	z, err := zonestore.Parse(strings.NewReader(text), origin, "")
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// memberVersion is a small version of a member zone, as its transfer
// would publish it.
func memberVersion(tb testing.TB, origin string) *zonestore.Zone {
	tb.Helper()
	z, err := zonestore.Parse(strings.NewReader("$TTL 300\n@ SOA ns1 h 1 3600 600 86400 300\n@ NS ns1\nns1 A 192.0.2.53\n"), origin, "")
	if err != nil {
		tb.Fatal(err)
	}
	return z
}

// TestCatalogMembers: a catalog zone's members with their member nodes'
// labels, and their coo properties; the catalogs RFC 9432 calls broken
// are refused whole.
func TestCatalogMembers(t *testing.T) {
	members, coo, err := catalogMembers(catalogZone(t, "cat.invalid.", `version TXT "2"`,
		"a.zones PTR a.test.", "B.zones PTR B.Test.", "coo.b.zones PTR new.invalid.", `group.a.zones TXT "x"`,
		`ext.a.zones TXT "y"`, "c.other PTR not.a.member."))
	if err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(members) != "map[a.test.:a b.test.:b]" || fmt.Sprint(coo) != "map[b.test.:new.invalid.]" {
		t.Fatalf("members %v, coo %v", members, coo)
	}
	for what, lines := range map[string][]string{
		"no version":                {"a.zones PTR a.test."},
		"version 1":                 {`version TXT "1"`, "a.zones PTR a.test."},
		"two versions":              {`version TXT "2"`, `version TXT "3"`, "a.zones PTR a.test."},
		"a member node of two PTRs": {`version TXT "2"`, "a.zones PTR a.test.", "a.zones PTR b.test."},
		"two nodes, one zone":       {`version TXT "2"`, "a.zones PTR a.test.", "b.zones PTR A.test."},
		"a coo of two PTRs":         {`version TXT "2"`, "a.zones PTR a.test.", "coo.a.zones PTR x.invalid.", "coo.a.zones PTR y.invalid."},
	} {
		if _, _, err := catalogMembers(catalogZone(t, "cat.invalid.", lines...)); err == nil {
			t.Errorf("%s: not refused", what)
		}
	}
}

// TestCatalogResetsAndHandsOver: applying catalog versions, as RFC 9432
// section 5 has a consumer do. A member whose node is renamed loses its
// version and is transferred afresh; a member of another catalog is
// taken only where that catalog's coo property names the new one, its
// version kept where the two labels match and dropped where not; a
// broken version changes nothing.
func TestCatalogResetsAndHandsOver(t *testing.T) {
	h := &Handler{store: zonestore.NewStore(), history: &history{}}
	dir := storage(t.TempDir())
	serve := func(origin string) { // a version of the member, as its transfer would publish
		t.Helper()
		if err := h.store.Publish(h.store.Get(origin), memberVersion(t, origin), true); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(dir.file(origin), []byte("a copy"), 0o644)
	}
	apply := func(catalog string, lines ...string) {
		t.Helper()
		h.applyCatalog(catalog, catalogZone(t, catalog, append([]string{`version TXT "2"`}, lines...)...), h.memberSettings(secondary.Config{Origin: catalog}), dir)
	}
	served := func(origin string) bool { return h.store.Get(origin) != nil }
	copied := func(origin string) bool { _, err := os.Stat(dir.file(origin)); return err == nil }
	owner := func(origin string) string {
		for c, m := range h.cats.members {
			if _, ok := m[origin]; ok {
				return c
			}
		}
		return ""
	}

	apply("old.invalid.", "a.zones PTR a.test.", "b.zones PTR b.test.", "c.zones PTR c.test.")
	for _, o := range []string{"a.test.", "b.test.", "c.test."} {
		serve(o)
	}
	member := h.secs.get("a.test.")

	// The same members again: nothing changes.
	apply("old.invalid.", "a.zones PTR a.test.", "b.zones PTR b.test.", "c.zones PTR c.test.")
	if h.secs.get("a.test.") != member || !served("a.test.") {
		t.Fatal("a member named again was made anew")
	}
	// a.test's node renamed: reset.
	apply("old.invalid.", "a2.zones PTR a.test.", "b.zones PTR b.test.", "c.zones PTR c.test.")
	if served("a.test.") || copied("a.test.") || h.secs.get("a.test.") == member || h.secs.get("a.test.") == nil {
		t.Fatalf("a renamed node: served %v, copy %v, member made anew %v", served("a.test."), copied("a.test."), h.secs.get("a.test.") != member)
	}
	serve("a.test.")

	// Another catalog names b.test and c.test: a clash, ignored.
	apply("new.invalid.", "b.zones PTR b.test.", "x.zones PTR c.test.")
	if owner("b.test.") != "old.invalid." || owner("c.test.") != "old.invalid." || !served("b.test.") {
		t.Fatal("a clash took a member from its catalog")
	}
	// The old catalog hands them over (coo); the new one takes them at
	// its next version: b.test's label is the same (kept), c.test's not (reset).
	apply("old.invalid.", "a2.zones PTR a.test.", "b.zones PTR b.test.", "coo.b.zones PTR new.invalid.", "c.zones PTR c.test.", "coo.c.zones PTR new.invalid.")
	if owner("b.test.") != "old.invalid." {
		t.Fatal("handed over before the new catalog's next version")
	}
	apply("new.invalid.", "b.zones PTR b.test.", "x.zones PTR c.test.")
	if owner("b.test.") != "new.invalid." || owner("c.test.") != "new.invalid." {
		t.Fatalf("not taken over: b.test %q, c.test %q", owner("b.test."), owner("c.test."))
	}
	if !served("b.test.") || !copied("b.test.") || served("c.test.") || copied("c.test.") {
		t.Fatalf("taken over: b.test served %v copy %v (same label: kept), c.test served %v copy %v (another: reset)",
			served("b.test."), copied("b.test."), served("c.test."), copied("c.test."))
	}
	// The old catalog still names them, with coo: nothing changes, and
	// once it drops them, the new catalog keeps them.
	apply("old.invalid.", "a2.zones PTR a.test.", "b.zones PTR b.test.", "coo.b.zones PTR new.invalid.", "c.zones PTR c.test.", "coo.c.zones PTR new.invalid.")
	apply("old.invalid.", "a2.zones PTR a.test.")
	if owner("b.test.") != "new.invalid." || !served("b.test.") || h.secs.get("b.test.") == nil {
		t.Fatal("the old catalog dropping a member it handed over removed it")
	}

	// A broken version: nothing changes.
	h.applyCatalog("old.invalid.", catalogZone(t, "old.invalid.", `version TXT "2"`, "a2.zones PTR a.test.", "z.zones PTR a.test."), h.memberSettings(secondary.Config{Origin: "old.invalid."}), dir)
	if owner("a.test.") != "old.invalid." || !served("a.test.") {
		t.Fatal("a broken catalog changed its members")
	}
	// A member dropped: its version and copy go.
	apply("old.invalid.")
	if served("a.test.") || copied("a.test.") || h.secs.get("a.test.") != nil {
		t.Fatal("a dropped member still served")
	}
}

// TestUnservedMembers: each scrape counts a catalog's members not served,
// pending (no version) and expired, summed over the blocks that follow it.
func TestUnservedMembers(t *testing.T) {
	version := func(origin string, expired bool) *zonestore.Zone {
		return memberVersion(t, origin).WithExpired(expired)
	}
	blocks := []*Handler{{store: zonestore.NewStore()}, {store: zonestore.NewStore()}}
	for i, h := range blocks {
		h.cats.members = map[string]map[string]string{"cat.invalid.": {"a.test.": "a", "b.test.": "b", "c.test.": "c", "d.test.": "d"}}
		h.store.Publish(nil, version("a.test.", false), true)
		h.store.Publish(nil, version("c.test.", true), true)
		if i == 1 {
			h.store.Publish(nil, version("d.test.", true), true)
		}
		scraped.track(h)
		defer scraped.untrack(h)
	}
	want := `
# HELP coredns_zonestore_catalog_members_unserved Member zones of a catalog zone not served: pending (not transferred or loaded yet: SERVFAIL) or expired (no refresh within the SOA expire: SERVFAIL).
# TYPE coredns_zonestore_catalog_members_unserved gauge
coredns_zonestore_catalog_members_unserved{catalog="cat.invalid.",state="expired"} 3
coredns_zonestore_catalog_members_unserved{catalog="cat.invalid.",state="pending"} 3
`
	if err := testutil.CollectAndCompare(scraped, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

// BenchmarkUnservedMembers100k: what a scrape's count of a catalog's
// unserved members costs among 100,000 members, 99,000 of them served.
func BenchmarkUnservedMembers100k(b *testing.B) {
	h := &Handler{store: zonestore.NewStore()}
	members := map[string]string{}
	var origins []string
	for i := range 100000 {
		o := fmt.Sprintf("m%d.test.", i)
		members[o], origins = fmt.Sprint(i), append(origins, o)
	}
	h.store.Reserve(origins)
	for _, o := range origins[1000:] {
		h.store.Publish(nil, memberVersion(b, o), true)
	}
	h.cats.members = map[string]map[string]string{"cat.invalid.": members}
	b.ReportAllocs()
	for b.Loop() {
		if n := h.unservedMembers()["cat.invalid."]; n.pending != 1000 {
			b.Fatalf("%d pending, want 1000", n.pending)
		}
	}
}

// BenchmarkSecondaryExpiries100k: what a scrape's look at when each
// secondary zone expires costs among a catalog's 100,000 members.
func BenchmarkSecondaryExpiries100k(b *testing.B) {
	h := &Handler{store: zonestore.NewStore()}
	var origins []string
	for i := range 100000 {
		origins = append(origins, fmt.Sprintf("m%d.test.", i))
	}
	h.store.Reserve(origins) // the members' places in one copy of the store's index, as a catalog makes them
	set := map[string]*member{}
	for _, o := range origins {
		h.store.Publish(nil, memberVersion(b, o), true)
		set[o] = &member{zone: secondary.New(secondary.Config{Origin: o, Store: h.store}), label: "cat.invalid."}
	}
	h.secs.set.Store(&set)
	b.ReportAllocs()
	for b.Loop() {
		first := map[string]time.Time{}
		h.secondaryExpiries(first)
		if len(first) != 1 {
			b.Fatalf("%d labels, want 1", len(first))
		}
	}
}
