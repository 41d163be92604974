package test

import (
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/ontimedns/ontime/internal/freeport"
)

func catalogZone(serial int, members ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "$ORIGIN catalog.invalid.\n$TTL 0\n@ SOA invalid. invalid. %d 3600 1 3600 0\n@ NS invalid.\nversion TXT \"2\"\n", serial)
	for i, m := range members {
		fmt.Fprintf(&b, "m%d.zones PTR %s.\n", i, m)
	}
	return b.String()
}

// TestCatalogZoneFromKnot: ontime consumes a catalog zone (RFC 9432) that
// Knot DNS serves: the members it names are transferred and served; a
// member added to the catalog is served once Knot's NOTIFY brings the new
// catalog; a member dropped from it stops being served, and its copy in
// the storage directory is removed. The catalog itself is not served.
func TestCatalogZoneFromKnot(t *testing.T) {
	port := freeport.Get(t)
	knot := startKnotPrimaries(t, []primaryZone{
		{origin: "catalog.invalid", text: catalogZone(1, "one.test", "two.test")},
		{origin: "one.test", text: zoneText("one.test", 1, "www A 192.0.2.1")},
		{origin: "two.test", text: zoneText("two.test", 1, "www A 192.0.2.2")},
		{origin: "three.test", text: zoneText("three.test", 1, "www A 192.0.2.3")},
	}, []int{port}, "", "difference")

	storage := t.TempDir()
	corefile := func(extra string) string {
		return fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    reload 2s 1s\n%s    zonestore {\n        catalog catalog.invalid %s\n        storage %s\n    }\n}\n", port, extra, knot.addr, storage)
	}
	path := filepath.Join(t.TempDir(), "Corefile")
	os.WriteFile(path, []byte(corefile("")), 0o644)
	s := start(t, "coredns", exec.Command(corednsBin, "-conf", path), port, "one.test", "two.test")
	if got := answerA(t, s.addr, "www.three.test."); got != "REFUSED" {
		t.Fatalf("three.test before the catalog names it: %s", got)
	}
	if got := answerA(t, s.addr, "version.catalog.invalid."); got != "REFUSED" {
		t.Fatalf("the catalog zone itself was served: %s", got)
	}

	knot.write(t, "catalog.invalid", catalogZone(2, "two.test", "three.test"))
	knot.reload(t)
	eventually(t, "three.test added, one.test dropped", func() bool {
		return answerA(t, s.addr, "www.three.test.") == "192.0.2.3" && answerA(t, s.addr, "www.one.test.") == "REFUSED"
	})
	if got := answerA(t, s.addr, "www.two.test."); got != "192.0.2.2" {
		t.Fatalf("two.test, in both versions of the catalog: %s", got)
	}
	// The member dropped loses its saved copy, the one added has one.
	eventually(t, "three.test saved", func() bool { _, err := os.Stat(filepath.Join(storage, "three.test.zone")); return err == nil })
	if _, err := os.Stat(filepath.Join(storage, "one.test.zone")); !os.IsNotExist(err) {
		t.Errorf("one.test's copy, dropped from the catalog: %v", err)
	}

	// A Corefile reload while the primary is away: the members are still
	// the catalog's, and served throughout, though the new configuration
	// cannot transfer the catalog again.
	knot.stop()
	os.WriteFile(path, []byte(corefile("    errors\n")), 0o644)
	deadline := time.Now().Add(6 * time.Second)
	for time.Now().Before(deadline) {
		if got := answerA(t, s.addr, "www.three.test."); got != "192.0.2.3" {
			t.Fatalf("three.test during the Corefile reload: %s", got)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if !strings.Contains(s.log.String(), "Reloading complete") {
		t.Fatalf("no reload in the log:\n%s", s.log.String())
	}
	if got := answerA(t, s.addr, "www.one.test."); got != "REFUSED" {
		t.Fatalf("one.test, dropped before the reload: %s", got)
	}
}

// startKnotCatalog starts Knot serving catalog.invalid, a catalog of n
// members m0000.test and on, each with www A memberAddress(i); with
// secret, transfers need the key xfr. (startKnotPrimaries).
func startKnotCatalog(t *testing.T, n int, secret string) (*knotPrimary, []string) {
	t.Helper()
	members := make([]string, n)
	zones := []primaryZone{{origin: "catalog.invalid"}}
	for i := range members {
		members[i] = fmt.Sprintf("m%04d.test", i)
		zones = append(zones, primaryZone{origin: members[i], text: zoneText(members[i], 1, "www A "+memberAddress(i))})
	}
	zones[0].text = catalogZone(1, members...)
	return startKnotPrimaries(t, zones, nil, secret, "whole"), members
}

func memberAddress(i int) string { return fmt.Sprintf("192.0.%d.%d", i/250, i%250+1) }

// membersServed reports whether s answers every member's www with its
// address.
func membersServed(t *testing.T, s *server, members []string) bool {
	for i, m := range members {
		if answerA(t, s.addr, "www."+m+".") != memberAddress(i) {
			return false
		}
	}
	return true
}

// TestLargeCatalogFromKnot: a catalog of 1,000 member zones, all served
// by Knot: ontime serves every one, on a few goroutines (its refreshes
// run on `transfers` workers, not a goroutine a zone: with one, the
// server had over 1,000), a name under none of them is REFUSED, and the
// members count in their catalog's series, with none of their own.
func TestLargeCatalogFromKnot(t *testing.T) {
	port := freeport.Get(t)
	const n = 1000
	knot, members := startKnotCatalog(t, n, "")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCorefile(t, fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    prometheus %s\n    zonestore {\n        catalog catalog.invalid %s\n        transfers 10\n    }\n}\n", port, prom, knot.addr), port)
	eventually(t, "every member served", func() bool { return membersServed(t, s, members) })
	// A goroutine a zone would be over 1,000; the server's own, its
	// workers' and the listeners' are a few dozen.
	if g := metric(t, prom, "go_goroutines"); g == 0 || g > 200 {
		t.Errorf("%v goroutines serving %d secondary zones", g, n)
	}
	if got := answerA(t, s.addr, "www.example.com."); got != "REFUSED" {
		t.Errorf("a name under no zone: %s", got)
	}
	// The members have no series of their own: they count under the
	// catalog's label, which counts its own transfer too.
	if got := metric(t, prom, `coredns_zonestore_catalog_members{catalog="catalog.invalid."}`); got != n {
		t.Errorf("catalog_members %v, want %d", got, n)
	}
	if got := metric(t, prom, `coredns_zonestore_transfers_total{result="published",type="axfr",zone="catalog.invalid."}`); got != n+1 {
		t.Errorf("AXFRs under the catalog's label: %v, want %d", got, n+1)
	}
	if b := scrape(t, prom); strings.Contains(string(b), `zone="m0000.test."`) {
		t.Error("a member has series of its own")
	}
}

// catalogText is catalog zone origin's text: its head, then lines.
func catalogText(origin string, serial int, lines ...string) string {
	return fmt.Sprintf("$ORIGIN %s.\n$TTL 0\n@ SOA invalid. invalid. %d 3600 1 3600 0\n@ NS invalid.\nversion TXT \"2\"\n%s\n", origin, serial, strings.Join(lines, "\n"))
}

// TestCatalogResetAndHandOverFromKnot: two catalog zones served by Knot,
// followed by ontime as RFC 9432 section 5 says. A member whose node is
// renamed is reset: transferred whole again. A member of one catalog
// that another names is ignored until the first hands it over with a coo
// property; then the second takes it at its next version, and, its node
// labelled the same in both, keeps the version it has (no transfer). A
// catalog broken by two nodes naming one zone changes nothing. A member
// no primary has counts as pending among the catalog's unserved members.
// The catalog's label says when the first of it and its members expires:
// the catalog, its SOA expire an hour where the members' are two weeks.
func TestCatalogResetAndHandOverFromKnot(t *testing.T) {
	port := freeport.Get(t)
	knot := startKnotPrimaries(t, []primaryZone{
		{origin: "old.invalid", text: catalogText("old.invalid", 1, "a.zones PTR one.test.", "b.zones PTR two.test.")},
		{origin: "new.invalid", text: catalogText("new.invalid", 1, "z.zones PTR three.test.", "n.zones PTR nowhere.test.")}, // nowhere.test: no primary has it
		{origin: "one.test", text: zoneText("one.test", 1, "www A 192.0.2.1")},
		{origin: "two.test", text: zoneText("two.test", 1, "www A 192.0.2.2")},
		{origin: "three.test", text: zoneText("three.test", 1, "www A 192.0.2.3")},
	}, []int{port}, "", "difference")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCorefile(t, fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    prometheus %s\n    zonestore {\n        catalog old.invalid %s\n        catalog new.invalid %s\n    }\n}\n",
		port, prom, knot.addr, knot.addr), port, "one.test", "two.test", "three.test")
	axfrs := func(catalog string) float64 {
		return metric(t, prom, fmt.Sprintf(`coredns_zonestore_transfers_total{result="published",type="axfr",zone="%s."}`, catalog))
	}
	members := func(catalog string) float64 {
		return metric(t, prom, fmt.Sprintf(`coredns_zonestore_catalog_members{catalog="%s."}`, catalog))
	}
	update := func(origin string, serial int, lines ...string) {
		t.Helper()
		knot.write(t, origin, catalogText(origin, serial, lines...))
		knot.reload(t)
	}
	eventually(t, "every first transfer counted", func() bool { return axfrs("old.invalid") == 3 && axfrs("new.invalid") == 2 })
	unserved := func(catalog, state string) float64 {
		return metric(t, prom, fmt.Sprintf(`coredns_zonestore_catalog_members_unserved{catalog="%s.",state="%s"}`, catalog, state))
	}
	if unserved("new.invalid", "pending") != 1 || unserved("old.invalid", "pending") != 0 || unserved("new.invalid", "expired") != 0 {
		t.Fatalf("members unserved: pending %v and %v, expired %v; want nowhere.test alone, pending",
			unserved("new.invalid", "pending"), unserved("old.invalid", "pending"), unserved("new.invalid", "expired"))
	}
	expires := metric(t, prom, `coredns_zonestore_secondary_expire_timestamp_seconds{zone="old.invalid."}`)
	if now := float64(time.Now().Unix()); expires < now+3590 || expires > now+3601 {
		t.Fatalf("old.invalid. expires at %v, %v s from now; want the catalog's SOA expire, 3600 s", expires, expires-now)
	}

	// one.test's node renamed: its version dropped, transferred whole again.
	update("old.invalid", 2, "a2.zones PTR one.test.", "b.zones PTR two.test.")
	eventually(t, "one.test reset and transferred again", func() bool { return axfrs("old.invalid") == 4 })
	if got := answerA(t, s.addr, "www.one.test."); got != "192.0.2.1" {
		t.Fatalf("one.test after its reset: %s", got)
	}

	// The new catalog names two.test: a clash, ignored.
	update("new.invalid", 2, "z.zones PTR three.test.", "n.zones PTR nowhere.test.", "b.zones PTR two.test.")
	eventually(t, "the clash logged", func() bool {
		return strings.Contains(s.log.String(), `names "two.test.", a member of catalog zone "old.invalid."`)
	})
	if members("old.invalid") != 2 || members("new.invalid") != 2 {
		t.Fatalf("after a clash: old has %v members, new %v", members("old.invalid"), members("new.invalid"))
	}
	// The old catalog hands it over; the new one takes it at its next
	// version, the same label: the version kept, no transfer.
	update("old.invalid", 3, "a2.zones PTR one.test.", "b.zones PTR two.test.", "coo.b.zones PTR new.invalid.")
	eventually(t, "old.invalid's coo applied", func() bool {
		return metric(t, prom, `coredns_zonestore_transfers_total{result="published",type="ixfr",zone="old.invalid."}`) == 2
	})
	update("new.invalid", 3, "z.zones PTR three.test.", "n.zones PTR nowhere.test.", "b.zones PTR two.test.")
	eventually(t, "two.test taken over", func() bool { return members("old.invalid") == 1 && members("new.invalid") == 3 })
	if got := answerA(t, s.addr, "www.two.test."); got != "192.0.2.2" || axfrs("new.invalid") != 2 {
		t.Fatalf("two.test taken over: %s, %v AXFRs under new.invalid (want 2: its state kept)", got, axfrs("new.invalid"))
	}
	// The old catalog drops it: the new one keeps it.
	update("old.invalid", 4, "a2.zones PTR one.test.")
	eventually(t, "old.invalid's last version applied", func() bool {
		return metric(t, prom, `coredns_zonestore_transfers_total{result="published",type="ixfr",zone="old.invalid."}`) == 3
	})
	if got := answerA(t, s.addr, "www.two.test."); got != "192.0.2.2" {
		t.Fatalf("two.test, dropped by the catalog that handed it over: %s", got)
	}

	// A broken catalog: two nodes name one.test; nothing changes.
	update("old.invalid", 5, "a2.zones PTR one.test.", "a3.zones PTR one.test.")
	eventually(t, "the broken catalog logged", func() bool { return strings.Contains(s.log.String(), "is broken, not used") })
	if got := answerA(t, s.addr, "www.one.test."); got != "192.0.2.1" || members("old.invalid") != 1 {
		t.Fatalf("after a broken catalog: one.test %s, %v members", got, members("old.invalid"))
	}
}

// TestReadyDespiteARefusedMember: a catalog member that its primary
// refuses (Knot answers REFUSED for a zone it does not have) does not
// hold the server unready once the others are loaded: waiting would not
// load it. It is answered SERVFAIL, and counted pending. A secondary zone
// whose primary does not answer still holds its server unready.
func TestReadyDespiteARefusedMember(t *testing.T) {
	port := freeport.Get(t)
	knot := startKnotPrimaries(t, []primaryZone{
		{origin: "catalog.invalid", text: catalogText("catalog.invalid", 1, "a.zones PTR one.test.", "n.zones PTR nowhere.test.")},
		{origin: "one.test", text: zoneText("one.test", 1, "www A 192.0.2.1")},
	}, nil, "", "whole")
	prom, ready := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t)), fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCorefile(t, fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    prometheus %s\n    ready %s\n    zonestore {\n        catalog catalog.invalid %s\n    }\n}\n",
		port, prom, ready, knot.addr), port, "one.test")
	readiness := func(addr string) int {
		resp, err := http.Get("http://" + addr + "/ready")
		if err != nil {
			return 0
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	eventually(t, "ready with nowhere.test refused", func() bool { return readiness(ready) == http.StatusOK })
	if got := answerA(t, s.addr, "www.nowhere.test."); got != "SERVFAIL" {
		t.Errorf("the refused member: %s, want SERVFAIL", got)
	}
	if got := metric(t, prom, `coredns_zonestore_catalog_members_unserved{catalog="catalog.invalid.",state="pending"}`); got != 1 {
		t.Errorf("pending members %v, want 1", got)
	}

	// A primary that does not answer: not ready.
	other, otherReady, closed := freeport.Get(t), fmt.Sprintf("127.0.0.1:%d", freeport.Get(t)), freeport.Get(t)
	startCorefile(t, fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    ready %s\n    zonestore {\n        secondary example.test 127.0.0.1:%d\n    }\n}\n", other, otherReady, closed), other)
	time.Sleep(3 * time.Second) // a refresh tried and failed, and retried
	if got := readiness(otherReady); got != http.StatusServiceUnavailable {
		t.Errorf("a secondary zone whose primary does not answer: ready answered %d, want 503", got)
	}
}

// TestCatalogMembersShareConnectionsFromKnot: a signed catalog's members,
// transferred from Knot, go over few TCP connections, each reused for
// transfer after transfer (RFC 7766 section 6.2.1), not one connection a
// member: Knot's own log names the connection (its remote port) of every
// transfer it sends. Every member is served whole.
func TestCatalogMembersShareConnectionsFromKnot(t *testing.T) {
	secret := "c2VjcmV0IGtleSBmb3IgdGhlIHRlc3RzIG9mIG9udGltZQ=="
	port := freeport.Get(t)
	const n = 200
	knot, members := startKnotCatalog(t, n, secret)
	s := startCorefile(t, fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    zonestore {\n        catalog catalog.invalid %s\n        tsig xfr. %s hmac-sha256\n        transfers 10\n    }\n}\n", port, knot.addr, secret), port)
	eventually(t, "every member served", func() bool { return membersServed(t, s, members) })
	// [m0001.test.] AXFR, outgoing, remote 127.0.0.1@PORT, started, serial 1
	started := regexp.MustCompile(`AXFR, outgoing, remote 127\.0\.0\.1@(\d+), started`).FindAllStringSubmatch(knot.log.String(), -1)
	conns := map[string]bool{}
	for _, m := range started {
		conns[m[1]] = true
	}
	// The ten workers' connections, and a few more where one was taken
	// as another transfer ended: nowhere near one a member.
	t.Logf("%d transfers over %d connections", len(started), len(conns))
	if len(started) != n+1 || len(conns) > 30 {
		t.Errorf("%d transfers (want %d) over %d connections", len(started), n+1, len(conns))
	}
}
