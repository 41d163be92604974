package test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/ontimedns/ontime/internal/freeport"
)

// configMap is a directory laid out as Kubernetes mounts a ConfigMap:
// each version in its own ..vN directory, ..data a symlink to the current
// one swapped by rename, and each file a symlink through ..data.
type configMap struct {
	t   testing.TB
	dir string
	n   int
}

// publish makes files (name -> zone text) the ConfigMap's new contents.
func (c *configMap) publish(files map[string]string) {
	c.n++
	d := filepath.Join(c.dir, fmt.Sprintf("..v%d", c.n))
	if err := os.Mkdir(d, 0o755); err != nil {
		c.t.Fatal(err)
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(d, name), []byte(text), 0o644); err != nil {
			c.t.Fatal(err)
		}
	}
	tmp := filepath.Join(c.dir, "..data.tmp")
	os.Remove(tmp)
	if err := os.Symlink(d, tmp); err != nil {
		c.t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(c.dir, "..data")); err != nil {
		c.t.Fatal(err)
	}
	entries, _ := os.ReadDir(c.dir)
	for _, e := range entries {
		if !strings.HasPrefix(e.Name(), "..") {
			if _, ok := files[e.Name()]; !ok {
				os.Remove(filepath.Join(c.dir, e.Name()))
			}
		}
	}
	for name := range files {
		os.Symlink(filepath.Join("..data", name), filepath.Join(c.dir, name))
	}
}

func zoneText(origin string, serial int, extra ...string) string {
	return fmt.Sprintf("$ORIGIN %s.\n$TTL 300\n@ SOA ns1 hostmaster %d 7200 3600 1209600 300\n@ NS ns1\nns1 A 192.0.2.53\n%s\n",
		origin, serial, strings.Join(extra, "\n"))
}

// TestDirectoryOfZones: a directory of zone files, mounted as a ConfigMap
// is: every file a zone; a broken one reported by name and line, counted,
// and the others served; new files become zones, changed ones are re-read
// (the symlink swap), removed ones stop being served, and a file broken
// later keeps its last good version. The ready plugin says ready once the
// directory is read.
func TestDirectoryOfZones(t *testing.T) {
	cm := &configMap{t: t, dir: t.TempDir()}
	cm.publish(map[string]string{
		"db.a.test":      zoneText("a.test", 1, "www A 192.0.2.1"),
		"db.b.test":      zoneText("b.test", 1, "www A 192.0.2.2"),
		"db.broken.test": zoneText("broken.test", 1, "www 3x A 192.0.2.3"),
		"README":         "not a zone",
	})
	prom, ready := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t)), fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    ready %s\n    zonestore {\n        directory %s\n        reload 100ms\n    }", prom, ready, cm.dir), "a.test", "b.test")

	resp, err := http.Get("http://" + ready + "/ready")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("ready: %d %s", resp.StatusCode, body)
	}
	for name, want := range map[string]string{"www.a.test.": "192.0.2.1", "www.b.test.": "192.0.2.2", "www.broken.test.": "REFUSED"} {
		if got := answerA(t, s.addr, name); got != want {
			t.Errorf("%s: %s, want %s", name, got, want)
		}
	}
	if !strings.Contains(s.log.String(), "db.broken.test") || !strings.Contains(s.log.String(), "line 6") {
		t.Errorf("the broken file is not reported by name and line:\n%s", s.log.String())
	}
	if n := metric(t, prom, `coredns_zonestore_load_failures_total{zone="broken.test."}`); n < 1 {
		t.Errorf("the broken file was not counted")
	}

	// a changes, b goes, c comes, broken is fixed.
	cm.publish(map[string]string{
		"db.a.test":      zoneText("a.test", 2, "www A 192.0.2.11"),
		"db.c.test":      zoneText("c.test", 1, "www A 192.0.2.4"),
		"db.broken.test": zoneText("broken.test", 2, "www A 192.0.2.3"),
	})
	eventually(t, "the directory's new contents", func() bool {
		return answerA(t, s.addr, "www.a.test.") == "192.0.2.11" && answerA(t, s.addr, "www.b.test.") == "REFUSED" &&
			answerA(t, s.addr, "www.c.test.") == "192.0.2.4" && answerA(t, s.addr, "www.broken.test.") == "192.0.2.3"
	})

	// a breaks: its last good version stays.
	before := metric(t, prom, `coredns_zonestore_load_failures_total{zone="a.test."}`)
	cm.publish(map[string]string{
		"db.a.test":      zoneText("a.test", 3, "www CNAME ns1", "www A 192.0.2.99"),
		"db.c.test":      zoneText("c.test", 1, "www A 192.0.2.4"),
		"db.broken.test": zoneText("broken.test", 2, "www A 192.0.2.3"),
	})
	eventually(t, "the failure to be counted", func() bool {
		return metric(t, prom, `coredns_zonestore_load_failures_total{zone="a.test."}`) > before
	})
	if got := answerA(t, s.addr, "www.a.test."); got != "192.0.2.11" {
		t.Fatalf("a broken file replaced its zone: %s", got)
	}
}
