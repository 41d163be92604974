package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/ontimedns/ontime/internal/freeport"
)

// TestStoreSurvivesCorefileReload: the reload plugin replaces the
// configuration while queries keep coming: none is refused or lost, the
// zone whose file did not change is not parsed again (no new version of it
// is published), and a zone the new Corefile adds is served.
func TestStoreSurvivesCorefileReload(t *testing.T) {
	dir := t.TempDir()
	org, net := filepath.Join(dir, "db.example.org"), filepath.Join(dir, "db.example.net")
	writeZone(t, org, 1, "www A 192.0.2.1")
	os.WriteFile(net, []byte(zoneText("example.net", 1, "www A 192.0.2.2")), 0o644)
	port, prom := freeport.Get(t), fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	corefile := func(extra string) string {
		return fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    reload 2s 1s\n    prometheus %s\n    zonestore %s example.org\n%s}\n", port, prom, org, extra)
	}
	path := filepath.Join(dir, "Corefile")
	os.WriteFile(path, []byte(corefile("")), 0o644)
	cmd := exec.Command(corednsBin, "-conf", path)
	s := start(t, "coredns", cmd, port, "example.org")
	published := metric(t, prom, `coredns_zonestore_publishes_total{zone="example.org."}`)

	stop := querying(s.addr, "www.example.org.", 4)
	os.WriteFile(path, []byte(corefile("    zonestore "+net+" example.net\n")), 0o644)
	eventually(t, "the new configuration", func() bool { return answerA(t, s.addr, "www.example.net.") == "192.0.2.2" })
	time.Sleep(500 * time.Millisecond) // the old instance's shutdown, under load
	if failed, all, first := stop(); failed > 0 {
		t.Errorf("%d of %d queries failed across the reload; the first: %s", failed, all, first)
	}
	if got := metric(t, prom, `coredns_zonestore_publishes_total{zone="example.org."}`); got != published {
		t.Errorf("example.org was published %v times, then %v: parsed again though its file did not change", published, got)
	}
	if !strings.Contains(s.log.String(), "Reloading complete") {
		t.Errorf("no reload in the log:\n%s", s.log.String())
	}
}
