package test

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// TestDashboardQueriesExportedMetrics: every metric the Grafana dashboard
// (deploy/grafana/ontime.json) queries is one the real binary exports, and
// every metric of ontime's plugins it exports is in its plugin's README;
// scraped from its /metrics after it served queries through every plugin
// the dashboard shows: codel, alias (a lookup upstream), zonestore (a
// directory with a broken file, a file zone, a signed one, and a
// secondary zone of Knot's).
func TestDashboardQueriesExportedMetrics(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "grafana", "ontime.json"))
	if err != nil {
		t.Fatal(err)
	}
	var dash struct {
		Panels []struct {
			Title   string
			Targets []struct{ Expr string }
		}
	}
	if err := json.Unmarshal(b, &dash); err != nil {
		t.Fatal(err)
	}
	wanted := map[string]string{} // metric -> panel
	name := regexp.MustCompile(`\bcoredns_[a-z0-9_]+`)
	for _, p := range dash.Panels {
		for _, tg := range p.Targets {
			for _, m := range name.FindAllString(tg.Expr, -1) {
				wanted[m] = p.Title
			}
		}
	}
	if len(wanted) < 10 {
		t.Fatalf("the dashboard queries only %d metrics", len(wanted))
	}

	upstream := startUpstream(t)
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, "db.example.org"), []byte(zoneText("example.org", 1, "www A 192.0.2.1", "alias 300 ALIAS a.target.test.")), 0o644)
	os.WriteFile(filepath.Join(dir, "db.broken.test"), []byte(zoneText("broken.test", 1, "www 3x A 192.0.2.1")), 0o644)
	net := filepath.Join(t.TempDir(), "db.example.net")
	os.WriteFile(net, []byte(zoneText("example.net", 1, "www A 192.0.2.2")), 0o644)
	signed := filepath.Join(t.TempDir(), "db.signed.test")
	key, signer, _ := newKey(t, t.TempDir(), "signed.test.")
	signedZone(t, signed, "signed.test.", 1, key, signer, nil, time.Now().Add(30*24*time.Hour))
	knot := startKnotPrimary(t, "example.com", zoneText("example.com", 1, "www A 192.0.2.3"), freeport.Get(t), "")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    codel\n    fastpack\n    alias {\n        upstream %s\n    }\n    zonestore {\n        directory %s\n    }\n    zonestore %s example.net\n    zonestore %s signed.test\n    zonestore {\n        secondary example.com %s\n    }", prom, upstream.addr, dir, net, signed, knot.addr), "example.org", "example.net", "signed.test", "example.com")
	for range 5 {
		answerA(t, s.addr, "www.example.org.")
		answerA(t, s.addr, "www.example.net.")
	}
	if got := answerA(t, s.addr, "alias.example.org."); got != "192.0.2.1" && got != "192.0.2.2" {
		t.Fatalf("alias: %s", got)
	}
	answerA(t, s.addr, "nx.example.org.")
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	exchange(t, s.addr, m, true)

	body := scrape(t, prom)
	exported := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || line[0] == '#' {
			continue
		}
		exported[strings.FieldsFunc(line, func(r rune) bool { return r == '{' || r == ' ' })[0]] = true
	}
	for metric, panel := range wanted {
		if !exported[metric] {
			t.Errorf("panel %q queries %s, which the binary does not export", panel, metric)
		}
	}

	// Every metric of ontime's plugins that the binary exports is in its
	// plugin's README.
	readmes := map[string]string{}
	for _, p := range []string{"codel", "fastpack", "alias", "zonestore"} {
		b, err := os.ReadFile(filepath.Join(repoRoot(t), "plugin", p, "README.md"))
		if err != nil {
			t.Fatal(err)
		}
		readmes[p] = string(b)
	}
	for metric := range exported {
		for p, readme := range readmes {
			if !strings.HasPrefix(metric, "coredns_"+p+"_") {
				continue
			}
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(metric, "_bucket"), "_sum"), "_count")
			if !strings.Contains(readme, "`"+base+"`") {
				t.Errorf("%s is exported but not in plugin/%s/README.md", base, p)
			}
		}
	}
}
