package test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

func TestBinaryListsZonestoreAndNamesOntime(t *testing.T) {
	out, err := exec.Command(corednsBin, "-plugins").CombinedOutput()
	if err != nil {
		t.Fatalf("-plugins: %v\n%s", err, out)
	}
	listed := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		listed[strings.TrimSpace(l)] = true
	}
	for _, p := range []string{"zonestore", "file", "prometheus"} {
		if !listed[p] {
			t.Errorf("coredns -plugins does not list %s:\n%s", p, out)
		}
	}
	out, err = exec.Command(corednsBin, "-version").CombinedOutput()
	if err != nil || !strings.HasPrefix(string(out), "ontime-") || !strings.Contains(string(out), "CoreDNS-1.15.0") {
		t.Fatalf("-version printed %q (%v), want ontime and its CoreDNS version", out, err)
	}
}

func TestBrokenZoneAtStartupIsFatalAndNamed(t *testing.T) {
	dir := t.TempDir()
	zf := filepath.Join(dir, "db.example.org")
	writeZone(t, zf, 1, "www 3x A 192.0.2.1")
	corefile := filepath.Join(dir, "Corefile")
	os.WriteFile(corefile, []byte(fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    zonestore %s example.org\n}\n", freeport.Get(t), zf)), 0o644)
	cmd := exec.Command(corednsBin, "-conf", corefile)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("coredns started with a broken zone file")
	}
	if err == nil || !strings.Contains(string(out), zf) || !strings.Contains(string(out), "line 5") || !strings.Contains(string(out), "3x") {
		t.Fatalf("want a fatal error naming the file, line 5 and the bad TTL; got %v:\n%s", err, out)
	}
}

func writeZone(t testing.TB, path string, serial int, extra ...string) {
	t.Helper()
	body := fmt.Sprintf("$ORIGIN example.org.\n$TTL 300\n@ SOA ns1 hostmaster %d 7200 3600 1209600 300\n@ NS ns1\n%s\nns1 A 192.0.2.53\n",
		serial, strings.Join(extra, "\n"))
	replaceFile(t, path, body)
}

// replaceFile writes text as path in one step (a file beside it, renamed
// over it), so that a server reloading it never reads half of it.
func replaceFile(t testing.TB, path, text string) {
	t.Helper()
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, path); err != nil {
		t.Fatal(err)
	}
}

// scrape returns the Prometheus text served at addr.
func scrape(t testing.TB, addr string) []byte {
	t.Helper()
	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return b
}

// metric returns the value of one sample of the Prometheus text at addr.
func metric(t testing.TB, addr, name string) float64 {
	t.Helper()
	b := scrape(t, addr)
	m := regexp.MustCompile(`(?m)^` + regexp.QuoteMeta(name) + ` (\S+)$`).FindSubmatch(b)
	if m == nil {
		return 0
	}
	v, _ := strconv.ParseFloat(string(m[1]), 64)
	return v
}

func answerA(t testing.TB, addr, name string) string {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, dns.TypeA)
	r, err := exchange(t, addr, m, false)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
		return dns.RcodeToString[r.Rcode]
	}
	return r.Answer[0].(*dns.A).A.String()
}

func eventually(t testing.TB, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// TestReloadNeverPublishesABrokenZone: a broken file on disk never replaces
// the working zone, the failure is counted, and the next good file is served.
// The zone file is reached through symlinks swapped as Kubernetes swaps a
// mounted ConfigMap's, so a new version is a new inode behind the same path.
func TestReloadNeverPublishesABrokenZone(t *testing.T) {
	dir := t.TempDir()
	version := func(n int, extra ...string) {
		d := filepath.Join(dir, fmt.Sprintf("..v%d", n))
		os.Mkdir(d, 0o755)
		writeZone(t, filepath.Join(d, "db.example.org"), n, extra...)
		tmp := filepath.Join(dir, "..data.tmp")
		os.Remove(tmp)
		if err := os.Symlink(d, tmp); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, "..data")); err != nil {
			t.Fatal(err)
		}
	}
	version(1, "www A 192.0.2.1")
	if err := os.Symlink("..data/db.example.org", filepath.Join(dir, "db.example.org")); err != nil {
		t.Fatal(err)
	}
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    zonestore %s example.org {\n        reload 100ms\n    }", prom, filepath.Join(dir, "db.example.org")), "example.org")

	if got := answerA(t, s.addr, "www.example.org."); got != "192.0.2.1" {
		t.Fatalf("www A = %s, want 192.0.2.1", got)
	}
	failures := `coredns_zonestore_load_failures_total{zone="example.org."}`
	serial := `coredns_zonestore_zone_serial{zone="example.org."}`

	for i, broken := range [][]string{
		{"www 3x A 192.0.2.2"},               // does not parse
		{"www A 192.0.2.2", "www CNAME ns1"}, // CNAME beside other data
		{"sub NS ns.sub", "www A 192.0.2.2"}, // glue missing
		{"www.example.com. A 192.0.2.2"},     // out of zone
	} {
		before := metric(t, prom, failures)
		version(2+i, broken...)
		eventually(t, "the failure to be counted", func() bool { return metric(t, prom, failures) > before })
		if got := answerA(t, s.addr, "www.example.org."); got != "192.0.2.1" {
			t.Fatalf("after broken version %v, www A = %s, want the old 192.0.2.1", broken, got)
		}
	}
	version(10, "www A 192.0.2.10")
	eventually(t, "the good version", func() bool { return answerA(t, s.addr, "www.example.org.") == "192.0.2.10" })
	if got := metric(t, prom, serial); got != 10 {
		t.Fatalf("%s = %v, want 10", serial, got)
	}
	if !strings.Contains(s.log.String(), "line 5") {
		t.Errorf("the log does not name the broken line:\n%s", s.log.String())
	}
}

// TestBadGCHeadroomIsRefused: ONTIME_GC_HEADROOM_MB that is not a number
// stops the binary before it serves, saying what it wants.
func TestBadGCHeadroomIsRefused(t *testing.T) {
	cmd := exec.Command(corednsBin, "-version")
	cmd.Env = append(os.Environ(), "ONTIME_GC_HEADROOM_MB=lots")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "ONTIME_GC_HEADROOM_MB") {
		t.Fatalf("ONTIME_GC_HEADROOM_MB=lots: %v\n%s", err, out)
	}
	cmd = exec.Command(corednsBin, "-version")
	cmd.Env = append(os.Environ(), "ONTIME_GC_HEADROOM_MB=64")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("ONTIME_GC_HEADROOM_MB=64: %v\n%s", err, out)
	}
}
