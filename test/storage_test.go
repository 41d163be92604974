package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// TestSecondaryRestartsFromSavedCopy: with `storage DIR`, a secondary's
// zones (a plain one, one Knot signs with NSEC3, and a catalog's member)
// are saved as transferred; ontime started again while Knot, their
// primary, is down serves each as it was, AXFR for AXFR, answer for
// answer; Knot back with a new version, the saved serial's IXFR brings
// it. A copy last refreshed longer ago than its SOA expire is answered
// SERVFAIL after a restart, as it would have been had ontime lived, and
// is served again once the primary answers.
func TestSecondaryRestartsFromSavedCopy(t *testing.T) {
	port := freeport.Get(t)
	// refresh 1h: only NOTIFY and the retry (1 s) after a failure refresh;
	// expire 600 s.
	plain := func(serial int, extra ...string) string {
		return fmt.Sprintf("$ORIGIN example.test.\n$TTL 300\n@ SOA ns1 hostmaster %d 3600 1 600 300\n@ NS ns1\nns1 A 192.0.2.53\n%s\n", serial, strings.Join(extra, "\n"))
	}
	knot := startKnotPrimaries(t, []primaryZone{
		{origin: "example.test", text: plain(1, "www A 192.0.2.1", `txt TXT "a \"quoted\" string" "two"`, "*.wild AAAA 2001:db8::1")},
		{origin: "signed.test", text: zoneText("signed.test", 1, "www A 192.0.2.2", "sub NS ns.sub", "ns.sub A 192.0.2.9"),
			conf: "    dnssec-signing: on\n    dnssec-policy: nsec3\n"},
		{origin: "catalog.invalid", text: catalogZone(1, "member.test")},
		{origin: "member.test", text: zoneText("member.test", 1, "www A 192.0.2.3")},
	}, []int{port}, "", "difference")
	storage := t.TempDir()
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	corefile := fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    prometheus %s\n    transfer {\n        to *\n    }\n    zonestore {\n        secondary example.test %s\n        secondary signed.test %[3]s\n        catalog catalog.invalid %[3]s\n        storage %s\n    }\n}\n",
		port, prom, knot.addr, storage)
	zones := []string{"example.test.", "signed.test.", "member.test."}
	s := startCorefile(t, corefile, port, zones...)

	// What ontime served before: every zone's transfer (Knot's), and answers.
	queries := []struct {
		name  string
		qtype uint16
	}{
		{"www.example.test.", dns.TypeA}, {"txt.example.test.", dns.TypeTXT}, {"x.wild.example.test.", dns.TypeAAAA},
		{"nx.example.test.", dns.TypeA}, {"www.signed.test.", dns.TypeA}, {"nx.signed.test.", dns.TypeA},
		{"www.sub.signed.test.", dns.TypeA}, {"signed.test.", dns.TypeDNSKEY}, {"www.member.test.", dns.TypeA},
	}
	answers := func(addr string) []string {
		var out []string
		for _, q := range queries {
			m := new(dns.Msg)
			m.SetQuestion(q.name, q.qtype)
			m.SetEdns0(1232, true)
			r, err := exchange(t, addr, m, false)
			if err != nil {
				t.Fatal(err)
			}
			r.Id = 0
			out = append(out, r.String())
		}
		return out
	}
	transfers := map[string]string{}
	for _, z := range zones {
		want := strings.Join(section(axfr(t, knot.addr, z)), "\n")
		eventually(t, z+" as Knot sends it", func() bool { return strings.Join(section(axfr(t, s.addr, z)), "\n") == want })
		transfers[z] = want
	}
	before := answers(s.addr)
	for _, f := range []string{"example.test.zone", "signed.test.zone", "member.test.zone", "catalog.invalid.zone"} {
		eventually(t, "the saved copy "+f, func() bool { _, err := os.Stat(filepath.Join(storage, f)); return err == nil })
	}

	// ontime and Knot both stop; ontime starts again, Knot still down.
	s.stop()
	knot.stop()
	s = startCorefile(t, corefile, port, zones...)
	for _, z := range zones {
		if got := strings.Join(section(axfr(t, s.addr, z)), "\n"); got != transfers[z] {
			t.Errorf("%s restored:\n%s\nwant (Knot's, before)\n%s", z, got, transfers[z])
		}
	}
	if after := answers(s.addr); strings.Join(after, "\n") != strings.Join(before, "\n") {
		t.Errorf("answers from the saved copies differ:\n%s\nbefore:\n%s", strings.Join(after, "\n"), strings.Join(before, "\n"))
	}
	// A catalog's member counts under its catalog's label, which the
	// catalog's own copy counts under too.
	for z, want := range map[string]float64{"example.test.": 1, "signed.test.": 1, "catalog.invalid.": 2} {
		if n := metric(t, prom, fmt.Sprintf(`coredns_zonestore_transfers_total{result="published",type="restored",zone=%q}`, z)); n != want {
			t.Errorf("%s: restored %v times, want %v", z, n, want)
		}
	}
	if !strings.Contains(s.log.String(), `Loaded zone "example.test." from its saved copy: serial 1`) {
		t.Errorf("no log line for the restored zone:\n%s", s.log.String())
	}

	// Knot back, then a new version: an IXFR from the restored serial.
	knot.restart(t)
	knot.update(t, plain(2, "www A 192.0.2.4", `txt TXT "a \"quoted\" string" "two"`, "*.wild AAAA 2001:db8::1"))
	eventually(t, "version 2 after Knot came back", func() bool { return answerA(t, s.addr, "www.example.test.") == "192.0.2.4" })
	if n := metric(t, prom, `coredns_zonestore_transfers_total{result="published",type="ixfr",zone="example.test."}`); n != 1 {
		t.Errorf("IXFRs from the restored serial: %v, want 1", n)
	}
	eventually(t, "version 2 saved", func() bool {
		b, _ := os.ReadFile(filepath.Join(storage, "example.test.zone"))
		return strings.HasPrefix(string(b), "; example.test. serial 2,")
	})

	// A copy last refreshed longer ago than its expire (600 s).
	s.stop()
	knot.stop()
	old := time.Now().Add(-700 * time.Second)
	os.Chtimes(filepath.Join(storage, "example.test.zone"), old, old)
	s = startCorefile(t, corefile, port, "member.test.")
	if got := answerA(t, s.addr, "www.example.test."); got != "SERVFAIL" {
		t.Errorf("a copy past its expire: %s, want SERVFAIL", got)
	}
	if got := answerA(t, s.addr, "www.signed.test."); got != "192.0.2.2" {
		t.Errorf("signed.test, within its expire: %s", got)
	}
	knot.restart(t)
	eventually(t, "served again once Knot answers", func() bool { return answerA(t, s.addr, "www.example.test.") == "192.0.2.4" })
	eventually(t, "the copy's time that of the refresh", func() bool {
		fi, err := os.Stat(filepath.Join(storage, "example.test.zone"))
		return err == nil && time.Since(fi.ModTime()) < time.Minute
	})
}

// restart starts Knot again, after stop, with its configuration, journal
// and the zone files written since.
func (k *knotPrimary) restart(t testing.TB) {
	t.Helper()
	var port int
	fmt.Sscanf(k.addr[strings.LastIndex(k.addr, ":")+1:], "%d", &port)
	k.server = start(t, "knotd", exec.Command(knotd(t), "-c", k.conf), port, k.origin)
}
