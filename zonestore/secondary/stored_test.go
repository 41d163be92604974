package secondary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ontimedns/ontime/bench/workload"
	"github.com/ontimedns/ontime/zonestore"
)

// restart is a secondary as a new process starts it: an empty store, the
// same file, the primaries at addr.
func restart(file, addr string, ev *events) (*Zone, *zonestore.Store) {
	return restartVerifying(file, addr, ev, nil)
}

func restartVerifying(file, addr string, ev *events, verify func(*zonestore.Zone) error) (*Zone, *zonestore.Store) {
	store := zonestore.NewStore()
	sec := New(Config{Origin: "example.test.", Primaries: []string{addr}, Store: store, Events: ev.add, File: file, Verify: verify, Timeout: 200 * time.Millisecond})
	sec.restore()
	return sec, store
}

// TestSavedCopy: with Config.File, each version transferred is saved; a
// secondary started again serves it before any primary answers, its
// expire running from the last good refresh (a refresh with nothing new
// touches the file, and writes nothing); a copy older than its expire is
// loaded expired (SERVFAIL) and brought back by the primary, by IXFR from
// its serial; a broken copy is reported, and replaced by the next AXFR.
func TestSavedCopy(t *testing.T) {
	p := startPrimary(t)
	file := filepath.Join(t.TempDir(), "example.test.zone")
	ev := &events{}
	sec, store := restart(file, p.addr, ev)
	if store.Get("example.test.") != nil || ev.String() != "" {
		t.Fatalf("no copy yet: restored %v, events %q", store.Get("example.test."), ev)
	}
	p.set(1, zoneV(t, "1", "www.example.test. 300 A 192.0.2.1", `t.example.test. 300 TXT "a b" "c\"d"`), nil)
	if err := sec.Refresh(); err != nil {
		t.Fatal(err)
	}
	text, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(text), "; example.test. serial 1,") || !strings.Contains(string(text), "www.example.test.\t300\tIN\tA\t192.0.2.1\n") {
		t.Fatalf("the saved copy:\n%s", text)
	}

	// Started again, the primary gone: served from the copy, not expired.
	gone := "127.0.0.1:9"
	ev = &events{}
	sec, store = restart(file, gone, ev)
	z := store.Get("example.test.")
	if z == nil || z.Expired() || answer(store, "www.example.test.") != "192.0.2.1" || ev.String() != "restored 1" {
		t.Fatalf("restored: %v, www %s, events %q", z, answer(store, "www.example.test."), ev)
	}
	if got := z.Lookup("t.example.test.", 16, false); len(got.Answer) != 1 || got.Answer[0].String() != `t.example.test.	300	IN	TXT	"a b" "c\"d"` {
		t.Fatalf("TXT restored as %v", got.Answer)
	}
	fi, _ := os.Stat(file)
	if got := time.Duration(sec.lastOK.Load()); got != time.Duration(fi.ModTime().UnixNano()) {
		t.Fatalf("the expire runs from %v, want the file's time %v", time.Unix(0, int64(got)), fi.ModTime())
	}

	// Last refreshed longer ago than its expire (600 s): loaded expired.
	old := time.Now().Add(-601 * time.Second)
	os.Chtimes(file, old, old)
	ev = &events{}
	sec, store = restart(file, p.addr, ev)
	if z := store.Get("example.test."); z == nil || !z.Expired() {
		t.Fatalf("a copy past its expire: loaded %v, expired %v", z != nil, z != nil && z.Expired())
	}
	// The primary still at serial 1: served again, the file touched, not written.
	before, _ := os.Stat(file)
	if err := sec.Refresh(); err != nil || store.Get("example.test.").Expired() || answer(store, "www.example.test.") != "192.0.2.1" {
		t.Fatalf("refreshed: %v, expired %v", err, store.Get("example.test.").Expired())
	}
	after, _ := os.Stat(file)
	if !os.SameFile(before, after) || time.Since(after.ModTime()) > time.Minute {
		t.Fatalf("a refresh with nothing new: the file rewritten (%v) or not touched (%v)", !os.SameFile(before, after), after.ModTime())
	}

	// The primary moves on: an IXFR from the restored serial, saved.
	v2, ixfr := zoneV(t, "2", "www.example.test. 300 A 192.0.2.2"), rrs(t, soa("2"),
		soa("1"), "www.example.test. 300 A 192.0.2.1", soa("2"), "www.example.test. 300 A 192.0.2.2", soa("2"))
	p.set(2, v2, ixfr)
	if err := sec.Refresh(); err != nil || p.asked() != "SOA IXFR" {
		t.Fatalf("refresh: %v, asked %q, want SOA IXFR", err, p.asked())
	}
	_, store = restart(file, gone, &events{})
	if answer(store, "www.example.test.") != "192.0.2.2" {
		t.Fatalf("restored after the IXFR: www %s", answer(store, "www.example.test."))
	}

	// A copy is verified as a transfer is: one without a digest, where
	// digests are required, is reported and not served.
	ev = &events{}
	if _, store = restartVerifying(file, gone, ev, (*zonestore.Zone).VerifyZONEMD); store.Get("example.test.") != nil || ev.String() != "restored failed" {
		t.Fatalf("a copy that does not verify: served %v, events %q", store.Get("example.test.") != nil, ev)
	}

	// A copy cut short (a power cut after the rename, before the disk had
	// it all) would parse, as a zone without its last records: refused,
	// whether the cut took the last line or records before it.
	whole, _ := os.ReadFile(file)
	lines := strings.SplitAfter(strings.TrimSuffix(string(whole), "\n"), "\n")
	for what, text := range map[string]string{
		"without its last line":   strings.Join(lines[:len(lines)-1], ""),
		"without a record before": strings.Join(append(append([]string{}, lines[:len(lines)-3]...), lines[len(lines)-2:]...), "") + "\n",
	} {
		os.WriteFile(file, []byte(text), 0o644)
		ev = &events{}
		if _, store = restart(file, gone, ev); store.Get("example.test.") != nil || ev.String() != "restored failed" {
			t.Fatalf("a copy %s:\n%s\nserved %v, events %q", what, text, store.Get("example.test.") != nil, ev)
		}
	}

	// A broken copy: reported, nothing served, replaced by the next AXFR.
	os.WriteFile(file, []byte("example.test. 300 SOA ns1 (\n"), 0o644)
	ev = &events{}
	sec, store = restart(file, p.addr, ev)
	if store.Get("example.test.") != nil || ev.String() != "restored failed" {
		t.Fatalf("a broken copy: %v, events %q", store.Get("example.test."), ev)
	}
	p.set(2, v2, ixfr)
	if err := sec.Refresh(); err != nil || p.asked() != "AXFR" {
		t.Fatalf("refresh: %v, asked %q", err, p.asked())
	}
	if _, store = restart(file, gone, &events{}); answer(store, "www.example.test.") != "192.0.2.2" {
		t.Fatalf("the copy written over the broken one: www %s", answer(store, "www.example.test."))
	}

	// A copy that cannot be written is reported; the zone is served.
	ev = &events{}
	sec, store = restart(filepath.Join(t.TempDir(), "no", "such", "dir"), p.addr, ev)
	if err := sec.Refresh(); err != nil || answer(store, "www.example.test.") != "192.0.2.2" || ev.String() != "axfr 2, saved failed" {
		t.Fatalf("unwritable: %v, www %s, events %q", err, answer(store, "www.example.test."), ev)
	}
}

// BenchmarkSaveRestore170k: what storage adds to a transfer of the load
// test's 170,000-host zone (a copy written), and to a start (read back).
func BenchmarkSaveRestore170k(b *testing.B) {
	z, err := zonestore.Parse(strings.NewReader(workload.Zone(170000)), workload.Origin, "")
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "zone")
	b.Run("save", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := save(file, z); err != nil {
				b.Fatal(err)
			}
		}
		b.ReportMetric(float64(z.Records()), "records")
	})
	b.Run("restore", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if _, _, err := loadSaved(file, workload.Origin); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkSaveSmall: what storage adds to a transfer of one of a
// catalog's many small zones (ten records, bench/genzones' shape).
func BenchmarkSaveSmall(b *testing.B) {
	z, err := zonestore.Parse(strings.NewReader("$ORIGIN z1.test.\n$TTL 3600\n@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ NS ns1\n@ NS ns2\nns1 A 192.0.2.53\nns2 A 192.0.2.54\n@ MX 10 mail\nmail A 10.0.1.1\nwww A 10.0.1.2\nwww AAAA 2001:db8::1\nftp CNAME www\n"), "z1.test.", "")
	if err != nil {
		b.Fatal(err)
	}
	file := filepath.Join(b.TempDir(), "z1.test.zone")
	b.ReportAllocs()
	for b.Loop() {
		if err := save(file, z); err != nil {
			b.Fatal(err)
		}
	}
}
