package test

import (
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// TestMetricsCountEveryQuery: the stock prometheus plugin's query families,
// counted by shardmetrics for the UDP queries codel's workers serve and by
// the stock handler for TCP, count every query of a mix sent to the binary
// exactly, under the labels stock CoreDNS gives them, and a scrape of them
// succeeds.
func TestMetricsCountEveryQuery(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1", "@ MX 10 mail", "mail A 192.0.2.25")
	addr := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    codel\n    zonestore %s example.org", addr, zf), "example.org")
	requests := func(proto, qtype string) string {
		return fmt.Sprintf(`coredns_dns_requests_total{family="1",proto="%s",server="dns://%s",type="%s",view="",zone="."}`, proto, s.addr, qtype)
	}
	responses := func(rcode string) string {
		return fmt.Sprintf(`coredns_dns_responses_total{plugin="zonestore",rcode="%s",server="dns://%s",view="",zone="."}`, rcode, s.addr)
	}
	sizes := func(name, proto, part string) string {
		return fmt.Sprintf(`coredns_dns_%s_%s{proto="%s",server="dns://%s",view="",zone="."}`, name, part, proto, s.addr)
	}
	watched := []string{
		requests("udp", "A"), requests("udp", "MX"), requests("udp", "other"), requests("tcp", "A"),
		responses("NOERROR"), responses("NXDOMAIN"),
		fmt.Sprintf(`coredns_dns_do_requests_total{server="dns://%s",view="",zone="."}`, s.addr),
		sizes("request_size_bytes", "udp", "sum"), sizes("request_size_bytes", "udp", "count"),
		sizes("response_size_bytes", "udp", "count"), sizes("response_size_bytes", "tcp", "count"),
	}
	before := map[string]float64{}
	for _, w := range watched {
		before[w] = metric(t, addr, w)
	}

	type q struct {
		name   string
		qtype  uint16
		net    string
		n      int
		rcode  int
		series string
	}
	mix := []q{
		{"www.example.org.", dns.TypeA, "udp", 30, dns.RcodeSuccess, requests("udp", "A")},
		{"nx%d.example.org.", dns.TypeA, "udp", 20, dns.RcodeNameError, requests("udp", "A")},
		{"example.org.", dns.TypeMX, "udp", 10, dns.RcodeSuccess, requests("udp", "MX")},
		{"www.example.org.", 999, "udp", 10, dns.RcodeSuccess, requests("udp", "other")},
		{"www.example.org.", dns.TypeA, "tcp", 7, dns.RcodeSuccess, requests("tcp", "A")},
	}
	want := map[string]float64{}
	i := 0
	for _, m := range mix {
		for k := 0; k < m.n; k++ {
			i++
			name := m.name
			if strings.Contains(name, "%d") {
				name = fmt.Sprintf(name, k)
			}
			r := new(dns.Msg)
			r.SetQuestion(name, m.qtype)
			if i%4 == 0 {
				r.SetEdns0(1232, true)
				want[watched[6]]++
			}
			c := &dns.Client{Net: m.net, Timeout: 2 * time.Second}
			a, _, err := c.Exchange(r, s.addr)
			if err != nil || a.Rcode != m.rcode {
				t.Fatalf("%s %d over %s: %v %v", name, m.qtype, m.net, err, a)
			}
			want[m.series]++
			want[responses(dns.RcodeToString[m.rcode])]++
			want[sizes("response_size_bytes", m.net, "count")]++
			if m.net == "udp" {
				want[sizes("request_size_bytes", "udp", "sum")] += float64(r.Len())
				want[sizes("request_size_bytes", "udp", "count")]++
			}
		}
	}

	resp, err := http.Get("http://" + addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), "coredns_dns_request_duration_seconds_count") {
		t.Fatalf("scrape: %s\n%s", resp.Status, body)
	}
	for _, w := range watched {
		if got := metric(t, addr, w) - before[w]; got != want[w] {
			t.Errorf("%s: %g more, want %g", w, got, want[w])
		}
	}
}

// TestMetricsAcrossReload: a Corefile reload builds a new chain with the
// stock plugin handed to shardmetrics again; the families keep counting
// from where they were, in one series each, and scrapes still succeed.
func TestMetricsAcrossReload(t *testing.T) {
	dir := t.TempDir()
	zf := filepath.Join(dir, "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	port, prom := freeport.Get(t), fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	corefile := func(extra string) string {
		return fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    reload 2s 1s\n    prometheus %s\n    codel\n    zonestore %s example.org\n%s}\n", port, prom, zf, extra)
	}
	path := filepath.Join(dir, "Corefile")
	os.WriteFile(path, []byte(corefile("")), 0o644)
	s := start(t, "coredns", exec.Command(corednsBin, "-conf", path), port, "example.org")
	series := fmt.Sprintf(`coredns_dns_requests_total{family="1",proto="udp",server="dns://%s",type="A",view="",zone="."}`, s.addr)
	ask := func(n int) {
		for i := 0; i < n; i++ {
			if got := answerA(t, s.addr, "www.example.org."); got != "192.0.2.1" {
				t.Fatalf("www.example.org: %q", got)
			}
		}
	}
	before := metric(t, prom, series)
	ask(20)
	os.WriteFile(path, []byte(corefile("    errors\n")), 0o644)
	eventually(t, "the reload", func() bool { return strings.Contains(s.log.String(), "Reloading complete") })
	ask(30)
	if got := metric(t, prom, series) - before; got != 50 {
		t.Errorf("%s: %g more across the reload, want 50", series, got)
	}
	resp, err := http.Get("http://" + prom + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Errorf("scrape after the reload: %s", resp.Status)
	}
}
