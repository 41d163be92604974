package test

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/alias/record"
	"github.com/ontimedns/ontime/internal/conformance"
	"github.com/ontimedns/ontime/internal/freeport"
)

// axfr pulls zone from addr over TCP and returns its records, and the
// number of SOA records seen.
func axfr(t testing.TB, addr, zone string) []dns.RR {
	t.Helper()
	m := new(dns.Msg)
	m.SetAxfr(zone)
	env, err := new(dns.Transfer).In(m, addr)
	if err != nil {
		t.Fatalf("AXFR %s from %s: %v", zone, addr, err)
	}
	var rrs []dns.RR
	for e := range env {
		if e.Error != nil {
			t.Fatalf("AXFR %s from %s: %v", zone, addr, e.Error)
		}
		rrs = append(rrs, e.RR...)
	}
	return rrs
}

// TestAXFRMatchesKnot: the stock transfer plugin over zonestore sends each
// conformance zone (unsigned, NSEC-signed, NSEC3-signed) as Knot does:
// the SOA first and last, and the same records in between, as a set.
func TestAXFRMatchesKnot(t *testing.T) {
	zones := conformanceZones(t)
	knot := startKnot(t, zones)
	body, names := zonestoreLines(zones, "")
	ours := startCoreDNS(t, "    transfer {\n        to *\n    }\n"+body, names...)
	for _, z := range zones {
		got, want := axfr(t, ours.addr, z.origin+"."), axfr(t, knot.addr, z.origin+".")
		if got[0].Header().Rrtype != dns.TypeSOA || got[len(got)-1].Header().Rrtype != dns.TypeSOA {
			t.Errorf("%s: AXFR does not begin and end with the SOA", z.origin)
		}
		if g, w := section(got), section(want); !slices.Equal(g, w) {
			t.Errorf("%s: AXFR has %d records, Knot's %d; first difference: %s", z.origin, len(g), len(w), firstDiff(g, w))
		}
	}
}

// TestTTLMismatchAsKnot: a zone file whose RRsets' records have differing
// TTLs (an explicit TTL beside $TTL's, a repeated record, three TTLs in
// one set) is held as Knot DNS holds it, each set at the TTL of its record
// read last: the same records, TTLs included, by AXFR, and an answer of
// one TTL.
func TestTTLMismatchAsKnot(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "ttl.test.zone")
	text := "$ORIGIN ttl.test.\n$TTL 3600\n@ SOA ns hostmaster 1 7200 3600 1209600 300\n@ NS ns\nns A 192.0.2.53\n" +
		"c 120 TXT \"x\"\n  TXT \"y\"\nx A 192.0.2.9\nx 60 A 192.0.2.9\n" +
		"y 60 A 192.0.2.10\ny 90 A 192.0.2.11\ny 30 A 192.0.2.12\nz 300 AAAA 2001:db8::2\nz 300 AAAA 2001:db8::3\n"
	if err := os.WriteFile(zf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	zones := []zoneFile{{origin: "ttl.test", path: zf}}
	knot := startKnot(t, zones)
	body, names := zonestoreLines(zones, "")
	ours := startCoreDNS(t, "    transfer {\n        to *\n    }\n"+body, names...)
	got, want := section(axfr(t, ours.addr, "ttl.test.")), section(axfr(t, knot.addr, "ttl.test."))
	if !slices.Equal(got, want) {
		t.Errorf("AXFR has %d records, Knot's %d; first difference: %s", len(got), len(want), firstDiff(got, want))
	}
	m := new(dns.Msg)
	m.SetQuestion("y.ttl.test.", dns.TypeA)
	r, err := exchange(t, ours.addr, m, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, rr := range r.Answer {
		if rr.Header().Ttl != 30 {
			t.Errorf("y A: %v, want every record at TTL 30", r.Answer)
			break
		}
	}
	if !strings.Contains(ours.log.String(), "3 RRsets had records of differing TTLs") {
		t.Errorf("no warning of the 3 RRsets given one TTL in the server's log:\n%s", ours.log.String())
	}
}

func firstDiff(a, b []string) string {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return fmt.Sprintf("ours %q, Knot's %q", a[i], b[i])
		}
	}
	return "one is a prefix of the other"
}

// TestAXFRCarriesALIAS: an ALIAS record is transferred as itself, while
// queries never see it.
func TestAXFRCarriesALIAS(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "@ 300 ALIAS cdn.example.net.", "www 300 ALIAS @")
	s := startCoreDNS(t, fmt.Sprintf("    transfer {\n        to *\n    }\n    zonestore %s example.org", zf), "example.org")
	var targets []string
	for _, rr := range axfr(t, s.addr, "example.org.") {
		if rr.Header().Rrtype == record.TypeALIAS {
			targets = append(targets, rr.Header().Name+" "+record.Target(rr))
		}
	}
	slices.Sort(targets)
	if strings.Join(targets, ", ") != "example.org. cdn.example.net., www.example.org. example.org." {
		t.Fatalf("ALIAS records transferred: %v", targets)
	}
}

// TestIXFRUpToDate: an IXFR from the current serial is answered with the
// SOA alone; from an older one, with the whole zone (AXFR fallback), in
// serial number arithmetic (RFC 1982): 4294967290 is older than 5.
func TestIXFRUpToDate(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 5, "www A 192.0.2.1")
	s := startCoreDNS(t, fmt.Sprintf("    transfer {\n        to *\n    }\n    zonestore %s example.org", zf), "example.org")
	for _, tc := range []struct {
		serial uint32
		want   int
	}{{5, 1}, {6, 1}, {4, 5}, {4294967290, 5}} {
		m := new(dns.Msg)
		m.SetIxfr("example.org.", tc.serial, "ns1.example.org.", "hostmaster.example.org.")
		env, err := new(dns.Transfer).In(m, s.addr)
		if err != nil {
			t.Fatal(err)
		}
		n := 0
		for e := range env {
			if e.Error != nil {
				t.Fatal(e.Error)
			}
			n += len(e.RR)
		}
		if n != tc.want {
			t.Errorf("IXFR from serial %d: %d records, want %d", tc.serial, n, tc.want)
		}
	}
}

// TestKnotFollowsOntime: Knot DNS as a secondary of ontime: it transfers
// the zone, and when ontime reloads a new version, ontime's NOTIFY makes
// Knot ask for it, and gets the difference by IXFR. The IXFR ontime
// answers is checked directly too: the difference, not the zone.
func TestKnotFollowsOntime(t *testing.T) {
	bin := knotd(t)
	zf := filepath.Join(t.TempDir(), "db.example.org")
	records := []string{"www A 192.0.2.1", "a A 192.0.2.10", "b A 192.0.2.11", "c A 192.0.2.12"}
	writeZone(t, zf, 1, records...)
	port, knotPort := freeport.Get(t), freeport.Get(t)
	s := startCorefile(t, fmt.Sprintf("example.org:%d {\n    bind 127.0.0.1\n    transfer {\n        to 127.0.0.1:%d\n    }\n    zonestore %s {\n        reload 100ms\n    }\n}\n", port, knotPort, zf), port, "example.org")

	knot := startKnotFollower(t, bin, knotPort, port, "", "example.org")
	if got := answerA(t, knot.addr, "www.example.org."); got != "192.0.2.1" {
		t.Fatalf("Knot after its first transfer: www %s", got)
	}

	writeZone(t, zf, 2, append([]string{"www A 192.0.2.2"}, records[1:]...)...)
	eventually(t, "Knot to follow ontime's new version", func() bool { return answerA(t, knot.addr, "www.example.org.") == "192.0.2.2" })
	if !strings.Contains(knot.log.String(), "IXFR") {
		t.Errorf("Knot did not take the new version by IXFR:\n%s", knot.log.String())
	}

	m := new(dns.Msg)
	m.SetIxfr("example.org.", 1, "ns1.example.org.", "hostmaster.example.org.")
	env, err := new(dns.Transfer).In(m, s.addr)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for e := range env {
		if e.Error != nil {
			t.Fatal(e.Error)
		}
		for _, rr := range e.RR {
			h := rr.Header()
			if soa, ok := rr.(*dns.SOA); ok {
				got = append(got, fmt.Sprintf("SOA %d", soa.Serial))
			} else {
				got = append(got, h.Name+" "+dns.TypeToString[h.Rrtype]+" "+rr.(*dns.A).A.String())
			}
		}
	}
	want := "SOA 2, SOA 1, www.example.org. A 192.0.2.1, SOA 2, www.example.org. A 192.0.2.2, SOA 2"
	if strings.Join(got, ", ") != want {
		t.Fatalf("IXFR from serial 1:\n got %s\nwant %s", strings.Join(got, ", "), want)
	}
}

// startKnotFollower starts Knot (bin) on knotPort as a secondary of the
// server on primaryPort for zones: it takes each by AXFR first, then each
// new version the primary's NOTIFY tells it of, by IXFR where it can
// (its log says which), keeping the differences in its journal. It allows
// transfers to 127.0.0.1, so that what it holds can be compared by AXFR.
// conf is more of each zone's configuration, indented as its items.
func startKnotFollower(t *testing.T, bin string, knotPort, primaryPort int, conf string, zones ...string) *server {
	t.Helper()
	dir := t.TempDir()
	var b strings.Builder
	knotServer(&b, dir, knotPort, "info")
	fmt.Fprintf(&b, "remote:\n  - id: ontime\n    address: 127.0.0.1@%d\n", primaryPort)
	b.WriteString("acl:\n  - id: notify\n    address: 127.0.0.1\n    action: notify\n  - id: xfr\n    address: 127.0.0.1\n    action: transfer\n")
	b.WriteString("template:\n  - id: default\n    zonefile-sync: -1\n    journal-content: changes\n")
	b.WriteString("zone:\n")
	for _, z := range zones {
		fmt.Fprintf(&b, "  - domain: %s\n    master: ontime\n    acl: [notify, xfr]\n    file: %s/%s.zone\n%s", z, dir, z, conf)
	}
	path := filepath.Join(dir, "knot.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return start(t, "knotd", exec.Command(bin, "-c", path), knotPort, zones...)
}

// TestTransferRefusalsAreLoggedAndCounted: AXFR goes only to the addresses
// the stock transfer plugin lists; from anyone else it is refused, and the
// refusal is logged (the log plugin's error class) and counted (the
// prometheus plugin's responses by rcode), which is how an operator of
// this build sees attempts to pull a zone (plugin/zonestore/README.md).
func TestTransferRefusalsAreLoggedAndCounted(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    log . {\n        class error\n    }\n    transfer {\n        to 127.0.0.2\n    }\n    zonestore %s example.org", prom, zf), "example.org")
	axfr := func(from string) (*dns.Msg, error) {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 2 * time.Second}
		conn, err := d.Dial("tcp", s.addr)
		if err != nil {
			return nil, err
		}
		defer conn.Close()
		c := &dns.Conn{Conn: conn}
		m := new(dns.Msg)
		m.SetAxfr("example.org.")
		if err := c.WriteMsg(m); err != nil {
			return nil, err
		}
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		return c.ReadMsg()
	}
	if r, err := axfr("127.0.0.2"); err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) == 0 {
		t.Fatalf("AXFR from the listed address: %v %v", err, r)
	}
	r, err := axfr("127.0.0.3")
	if err != nil || r.Rcode != dns.RcodeRefused || len(r.Answer) != 0 {
		t.Fatalf("AXFR from an address not listed: %v %v, want REFUSED", err, r)
	}
	eventually(t, "the refusal in the log", func() bool {
		return strings.Contains(s.log.String(), "127.0.0.3") && strings.Contains(s.log.String(), "AXFR") && strings.Contains(s.log.String(), "REFUSED")
	})
	// A transfer is counted as its connection's goroutine returns, which
	// can be after the client has read the last message: on a loaded
	// machine the first AXFR's count came after the second's answer.
	var body []byte
	for end := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		resp, err := http.Get("http://" + prom + "/metrics")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if regexp.MustCompile(`(?m)^coredns_dns_responses_total\{[^}]*rcode="REFUSED"[^}]*\} [1-9]`).Match(body) &&
			regexp.MustCompile(`(?m)^coredns_dns_requests_total\{[^}]*type="AXFR"[^}]*\} 2`).Match(body) {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("the refused AXFR is not counted after 10 s:\n%s", regexp.MustCompile(`(?m)^coredns_dns_(requests|responses)_total.*$`).FindAll(body, -1))
		}
	}
}

// TestTransferNeedsTSIGKey: with the stock tsig plugin requiring a key for
// AXFR and IXFR, an unsigned AXFR is refused and one signed with a wrong
// secret gets NOTAUTH, both logged and counted; one signed with the key
// gets the whole zone, every message of it signed (the client verifies
// each).
func TestTransferNeedsTSIGKey(t *testing.T) {
	const secret = "c2VjcmV0IGtleSBmb3IgdGhlIHRlc3RzIG9mIG9udGltZQ=="
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    log . {\n        class error\n    }\n    tsig {\n        secret xfr. %s\n        require AXFR IXFR\n    }\n    transfer {\n        to *\n    }\n    zonestore %s example.org", prom, secret, zf), "example.org")
	transfer := func(key string) ([]dns.RR, error) {
		m := new(dns.Msg)
		m.SetAxfr("example.org.")
		tr := new(dns.Transfer)
		if key != "" {
			m.SetTsig("xfr.", dns.HmacSHA256, 300, time.Now().Unix())
			tr.TsigSecret = map[string]string{"xfr.": key}
		}
		env, err := tr.In(m, s.addr)
		if err != nil {
			return nil, err
		}
		var rrs []dns.RR
		for e := range env {
			if e.Error != nil {
				return rrs, e.Error
			}
			rrs = append(rrs, e.RR...)
		}
		return rrs, nil
	}
	if rrs, err := transfer(""); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("rcode: %d", dns.RcodeRefused)) {
		t.Fatalf("an unsigned AXFR: %v, %d records; want REFUSED", err, len(rrs))
	}
	if rrs, err := transfer("d3Jvbmcgc2VjcmV0"); err == nil || len(rrs) > 0 {
		t.Fatalf("an AXFR signed with a wrong secret: %v, %d records; want a refusal", err, len(rrs))
	}
	rrs, err := transfer(secret)
	if err != nil {
		t.Fatalf("an AXFR signed with the key: %v", err)
	}
	if len(rrs) != len(axfrOf(t, zf)) {
		t.Fatalf("an AXFR signed with the key: %d records, want %d", len(rrs), len(axfrOf(t, zf)))
	}
	eventually(t, "the unsigned AXFR's refusal in the log", func() bool {
		return strings.Contains(s.log.String(), "AXFR") && strings.Contains(s.log.String(), "REFUSED")
	})
	// Counted once its connection's goroutine returns through the
	// prometheus plugin, which may be after the client has the answer: on
	// a loaded machine the count was read before the NOTAUTH one.
	var body []byte
	uncounted := func() string {
		resp, err := http.Get("http://" + prom + "/metrics")
		if err != nil {
			return err.Error()
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		for _, rcode := range []string{"REFUSED", "NOTAUTH"} {
			if !regexp.MustCompile(`(?m)^coredns_dns_responses_total\{[^}]*rcode="` + rcode + `"[^}]*\} 1$`).Match(body) {
				return rcode
			}
		}
		return ""
	}
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		what := uncounted()
		if what == "" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the %s AXFR is not counted, 10 s on:\n%s", what, regexp.MustCompile(`(?m)^coredns_dns_responses_total.*$`).FindAll(body, -1))
		}
	}
}

// axfrOf is the zone file's records as an AXFR carries them: the SOA
// first and last.
func axfrOf(t *testing.T, path string) []dns.RR {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var rrs []dns.RR
	zp := dns.NewZoneParser(f, "example.org.", path)
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		rrs = append(rrs, rr)
	}
	if err := zp.Err(); err != nil {
		t.Fatal(err)
	}
	return append(rrs, rrs[0])
}

// TestNoApexNSAsKnot: a zone file without NS records at its apex is loaded
// and served as Knot DNS serves it (NODATA for its NS, its other names
// answered), with a warning in the log, as Knot's; a zone with them, beside
// it, gets none.
func TestNoApexNSAsKnot(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "nons.test.zone")
	text := "$ORIGIN nons.test.\n$TTL 3600\n@ SOA ns.example.net. hostmaster 1 7200 3600 1209600 300\n@ MX 10 mail\nmail A 192.0.2.25\nwww A 192.0.2.80\n"
	if err := os.WriteFile(zf, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	withNS := filepath.Join(t.TempDir(), "ns.test.zone")
	if err := os.WriteFile(withNS, []byte("$ORIGIN ns.test.\n$TTL 3600\n@ SOA ns hostmaster 1 7200 3600 1209600 300\n@ NS ns\nns A 192.0.2.53\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	zones := []zoneFile{{origin: "nons.test", path: zf}, {origin: "ns.test", path: withNS}}
	knot := startKnot(t, zones)
	body, names := zonestoreLines(zones, "")
	ours := startCoreDNS(t, body, names...)
	for _, q := range []conformance.Query{
		{Name: "nons.test.", Qtype: dns.TypeNS}, {Name: "nons.test.", Qtype: dns.TypeSOA},
		{Name: "nons.test.", Qtype: dns.TypeMX}, {Name: "www.nons.test.", Qtype: dns.TypeA},
		{Name: "nx.nons.test.", Qtype: dns.TypeA},
	} {
		m := new(dns.Msg)
		m.SetQuestion(q.Name, q.Qtype)
		k, o := exchangeBoth(t, knot.addr, ours.addr, m, false)
		if d := diff(q, k, o); len(d) > 0 {
			t.Errorf("%s %s:\n%s", q.Name, dns.TypeToString[q.Qtype], strings.Join(d, "\n"))
		}
	}
	if log := ours.log.String(); !strings.Contains(log, `Zone "nons.test." serial 1 has no NS records at its apex`) ||
		strings.Count(log, "has no NS records") != 1 {
		t.Errorf("want one warning, of nons.test.'s missing NS records, in the server's log:\n%s", log)
	}
}
