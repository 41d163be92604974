package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// TestGeneratedCatalogFollowedByKnot: ontime generates a catalog zone
// (RFC 9432) of its directory's zones and a file's (`generate_catalog`);
// Knot, told only of the catalog (catalog-role: interpret), serves every
// zone it names. A zone file added to the directory reaches Knot by the
// catalog's next version, which ontime's NOTIFY announces; one removed
// is dropped by Knot. Knot's copy of the catalog is ontime's, serial and
// records.
func TestGeneratedCatalogFollowedByKnot(t *testing.T) {
	bin := knotd(t)
	dir, files := t.TempDir(), t.TempDir()
	zone := func(origin string) string {
		return fmt.Sprintf("$ORIGIN %s\n@ 300 SOA ns1 hostmaster 1 3600 600 86400 300\n@ 300 NS ns1\nns1 300 A 192.0.2.53\nwww 300 A 192.0.2.1\n", origin)
	}
	write := func(path, text string) {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write(filepath.Join(dir, "db.a.test"), zone("a.test."))
	write(filepath.Join(dir, "db.b.test"), zone("b.test."))
	write(filepath.Join(files, "example.org.zone"), zone("example.org."))

	port, knotPort := freeport.Get(t), freeport.Get(t)
	corefile := fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    transfer {\n        to * 127.0.0.1:%d\n    }\n"+
		"    zonestore {\n        directory %s\n        reload 1s\n        generate_catalog catalog.test\n    }\n"+
		"    zonestore %s example.org\n}\n", port, knotPort, dir, filepath.Join(files, "example.org.zone"))
	s := startCorefile(t, corefile, port, "a.test", "b.test", "example.org", "catalog.test")

	kdir := t.TempDir()
	var b strings.Builder
	knotServer(&b, kdir, knotPort, "info")
	fmt.Fprintf(&b, "remote:\n  - id: ontime\n    address: 127.0.0.1@%d\n", port)
	b.WriteString("acl:\n  - id: notify\n    address: 127.0.0.1\n    action: notify\n  - id: xfr\n    address: 127.0.0.1\n    action: transfer\n")
	fmt.Fprintf(&b, "template:\n  - id: default\n    storage: %s\n    zonefile-sync: -1\n    journal-content: none\n", kdir)
	fmt.Fprintf(&b, "  - id: member\n    storage: %s\n    master: ontime\n    acl: notify\n    zonefile-sync: -1\n    journal-content: none\n", kdir)
	b.WriteString("zone:\n  - domain: catalog.test\n    master: ontime\n    acl: [notify, xfr]\n    catalog-role: interpret\n    catalog-template: member\n")
	conf := filepath.Join(kdir, "knot.conf")
	write(conf, b.String())
	knot := start(t, "knotd", exec.Command(bin, "-c", conf), knotPort) // Knot answers no query for a catalog it interprets

	serves := func(origin string) bool { return answerA(t, knot.addr, "www."+origin) == "192.0.2.1" }
	eventually(t, "Knot to serve the catalog's zones", func() bool {
		return serves("a.test.") && serves("b.test.") && serves("example.org.")
	})
	// Knot's copy of the catalog, read through knotc, against ontime's
	// AXFR (its last record, the SOA again, left out).
	same := func() bool {
		out, err := exec.Command("knotc", "-c", conf, "zone-read", "catalog.test").CombinedOutput()
		if err != nil {
			return false
		}
		var knots []dns.RR
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			_, text, _ := strings.Cut(l, "] ") // each line begins with the zone in brackets
			rr, err := dns.NewRR(text)
			if err != nil {
				t.Fatalf("knotc zone-read: %q: %v", l, err)
			}
			knots = append(knots, rr)
		}
		ours := axfr(t, s.addr, "catalog.test.")
		return strings.Join(section(knots), "\n") == strings.Join(section(ours[:len(ours)-1]), "\n")
	}
	eventually(t, "Knot's catalog to be ontime's", same)

	before := serialOf(t, s.addr, "catalog.test.")
	write(filepath.Join(dir, "db.c.test"), zone("c.test."))
	eventually(t, "Knot to serve c.test, added to the directory", func() bool { return serves("c.test.") })
	if after := serialOf(t, s.addr, "catalog.test."); after <= before {
		t.Errorf("the catalog's serial went from %d to %d", before, after)
	}

	os.Remove(filepath.Join(dir, "db.a.test"))
	eventually(t, "Knot to drop a.test, removed from the directory", func() bool { return answerA(t, knot.addr, "www.a.test.") == "REFUSED" })
	if !serves("b.test.") || !serves("c.test.") || !serves("example.org.") {
		t.Error("Knot dropped a zone the catalog still names")
	}
	eventually(t, "Knot's catalog to be ontime's again", same)
}
