package test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// knotPrimary is Knot DNS serving zones as a primary: AXFR, IXFR from
// its journal (the differences between versions of each zone file), and
// NOTIFY to ontime.
type knotPrimary struct {
	*server
	conf   string
	files  map[string]string // each zone's file, by origin
	origin string            // the first zone: update's
}

// startKnotPrimary starts Knot with one zone; with secret set, transfers
// need the TSIG key xfr. (hmac-sha256, that secret), and Knot signs its
// NOTIFY with it.
func startKnotPrimary(t testing.TB, origin, zone string, notifyPort int, secret string) *knotPrimary {
	t.Helper()
	return startKnotPrimaries(t, []primaryZone{{origin: origin, text: zone}}, []int{notifyPort}, secret, "difference")
}

// primaryZone is a zone's origin, the text of its file, and lines of
// Knot's configuration for it alone (indented as a zone's items), if any.
type primaryZone struct{ origin, text, conf string }

// startKnotPrimaries starts Knot with zones, each sending NOTIFY to every
// port of notifyPorts on 127.0.0.1, as startKnotPrimary. load is Knot's
// zonefile-load: "difference" keeps each version's difference from the
// one before for IXFR; "whole" loads each version afresh.
func startKnotPrimaries(t testing.TB, zones []primaryZone, notifyPorts []int, secret, load string) *knotPrimary {
	t.Helper()
	bin := knotd(t)
	dir := t.TempDir()
	port := freeport.Get(t)
	k := &knotPrimary{conf: filepath.Join(dir, "knot.conf"), files: map[string]string{}, origin: zones[0].origin}
	var b strings.Builder
	knotServer(&b, dir, port, "info")
	acl := "acl:\n  - id: xfr\n    address: 127.0.0.1\n    action: transfer\n"
	if secret != "" {
		fmt.Fprintf(&b, "key:\n  - id: xfr.\n    algorithm: hmac-sha256\n    secret: %s\n", secret)
		acl += "    key: xfr.\n"
	}
	if len(notifyPorts) > 0 {
		b.WriteString("remote:\n")
	}
	var remotes []string
	for i, p := range notifyPorts {
		fmt.Fprintf(&b, "  - id: ontime%d\n    address: 127.0.0.1@%d\n", i, p)
		if secret != "" {
			b.WriteString("    key: xfr.\n") // NOTIFY signed too
		}
		remotes = append(remotes, fmt.Sprintf("ontime%d", i))
	}
	b.WriteString(acl)
	// A policy a zone may sign under (its conf: dnssec-signing: on,
	// dnssec-policy: nsec3); Knot's default signs with NSEC.
	b.WriteString("policy:\n  - id: nsec3\n    nsec3: on\n")
	fmt.Fprintf(&b, "template:\n  - id: default\n    zonefile-sync: -1\n    zonefile-load: %s\n    journal-content: changes\n", load)
	b.WriteString("zone:\n")
	var origins []string
	for _, z := range zones {
		k.files[z.origin] = filepath.Join(dir, z.origin+".zone")
		k.write(t, z.origin, z.text)
		fmt.Fprintf(&b, "  - domain: %s\n    file: %s\n    acl: xfr\n%s", z.origin, k.files[z.origin], z.conf)
		if len(remotes) > 0 {
			fmt.Fprintf(&b, "    notify: [%s]\n", strings.Join(remotes, ", "))
		}
		origins = append(origins, z.origin)
	}
	if err := os.WriteFile(k.conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	k.server = start(t, "knotd", exec.Command(bin, "-c", k.conf), port, origins...)
	return k
}

// update writes a new version of the first zone's file and has Knot load
// it: Knot stores the difference in its journal and sends NOTIFY.
func (k *knotPrimary) update(t testing.TB, zone string) {
	t.Helper()
	k.write(t, k.origin, zone)
	k.reload(t)
}

// write writes a new version of a zone's file, for reload to load.
func (k *knotPrimary) write(t testing.TB, origin, zone string) {
	t.Helper()
	if err := os.WriteFile(k.files[origin], []byte(zone), 0o644); err != nil {
		t.Fatal(err)
	}
}

// reload has Knot load every zone file written since.
func (k *knotPrimary) reload(t testing.TB) {
	t.Helper()
	if out, err := exec.Command("knotc", "-c", k.conf, "zone-reload").CombinedOutput(); err != nil {
		t.Fatalf("knotc zone-reload: %v\n%s", err, out)
	}
}

func secondaryZone(serial int, extra ...string) string {
	// refresh 1h: only NOTIFY makes ontime refresh in time; retry 1s,
	// expire 4s: a primary gone is noticed quickly.
	return fmt.Sprintf("$ORIGIN example.test.\n$TTL 300\n@ SOA ns1 hostmaster %d 3600 1 4 300\n@ NS ns1\nns1 A 192.0.2.53\n%s\n",
		serial, strings.Join(extra, "\n"))
}

// TestSecondaryFromKnot: ontime as a secondary of Knot DNS: the first
// AXFR carries the whole zone (ontime's AXFR out equals Knot's); a new
// version reaches ontime by NOTIFY and IXFR; a NOTIFY from anyone but the
// primary is refused and counted; when the primary is gone, the zone
// keeps serving until its SOA expire, then answers SERVFAIL.
func TestSecondaryFromKnot(t *testing.T) {
	port := freeport.Get(t)
	knot := startKnotPrimary(t, "example.test", secondaryZone(1, "www A 192.0.2.1", "mail MX 10 www", "*.wild TXT \"w\""), port, "")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	corefile := fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    prometheus %s\n    transfer {\n        to *\n    }\n    zonestore {\n        secondary example.test %s\n    }\n}\n", port, prom, knot.addr)
	s := startCorefile(t, corefile, port, "example.test")

	if got, want := section(axfr(t, s.addr, "example.test.")), section(axfr(t, knot.addr, "example.test.")); strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("the transferred zone differs from Knot's:\nours %v\nKnot %v", got, want)
	}
	if got := answerA(t, s.addr, "www.example.test."); got != "192.0.2.1" {
		t.Fatalf("www: %s", got)
	}

	knot.update(t, secondaryZone(2, "www A 192.0.2.2", "mail MX 10 www", "new A 192.0.2.3"))
	eventually(t, "the new version, by NOTIFY and IXFR", func() bool {
		return answerA(t, s.addr, "www.example.test.") == "192.0.2.2" && answerA(t, s.addr, "new.example.test.") == "192.0.2.3"
	})
	if n := metric(t, prom, `coredns_zonestore_transfers_total{result="published",type="ixfr",zone="example.test."}`); n != 1 {
		t.Errorf("IXFRs published: %v, want 1", n)
	}
	if n := metric(t, prom, `coredns_zonestore_notifies_total{result="accepted",zone="example.test."}`); n < 1 {
		t.Errorf("NOTIFY from Knot not counted")
	}
	if got := answerA(t, s.addr, "x.wild.example.test."); got != "NXDOMAIN" {
		t.Errorf("x.wild after the IXFR that removed the wildcard: %s, want NXDOMAIN", got)
	}

	// NOTIFY from an address that is not the primary.
	m := new(dns.Msg)
	m.SetNotify("example.test.")
	c := &dns.Client{Dialer: &net.Dialer{LocalAddr: &net.UDPAddr{IP: net.ParseIP("127.0.0.2")}, Timeout: 2 * time.Second}}
	r, _, err := c.Exchange(m, s.addr)
	if err != nil || r.Rcode != dns.RcodeRefused {
		t.Errorf("NOTIFY from 127.0.0.2: %v %v, want REFUSED", err, r)
	}
	if n := metric(t, prom, `coredns_zonestore_notifies_total{result="refused",zone="example.test."}`); n != 1 {
		t.Errorf("refused NOTIFY counted %v times, want 1", n)
	}

	// The primary goes: the zone is served until it expires (4 s).
	knot.stop()
	s.notifyRefresh(t)
	if got := answerA(t, s.addr, "www.example.test."); got != "192.0.2.2" {
		t.Fatalf("right after the primary went: %s", got)
	}
	eventually(t, "the zone to expire", func() bool { return answerA(t, s.addr, "www.example.test.") == "SERVFAIL" })
	if n := metric(t, prom, `coredns_zonestore_load_failures_total{zone="example.test."}`); n < 1 {
		t.Errorf("failed refreshes not counted")
	}
}

// notifyRefresh sends a NOTIFY from 127.0.0.1 (where the primary is), so
// the secondary tries a refresh now.
func (s *server) notifyRefresh(t testing.TB) {
	m := new(dns.Msg)
	m.SetNotify("example.test.")
	exchange(t, s.addr, m, false)
}

// TestSecondaryWithTSIG: Knot requires a TSIG key for transfers; ontime
// with the key transfers the zone, ontime without it does not, and says
// SERVFAIL for the zone it cannot load. Knot's NOTIFY, signed with the
// key, brings the next version (refresh is an hour away); a NOTIFY from
// the primary's address that is unsigned, or signed with a wrong secret,
// is refused NOTAUTH and counted; a signed one is answered signed. Over
// UDP, the NOTIFY is read and verified by codel's reader, and over TCP by
// CoreDNS's; with the stock tsig plugin in the chain, which checks the
// signature and takes it off the message, the same holds.
func TestSecondaryWithTSIG(t *testing.T) {
	secret := "c2VjcmV0IGtleSBmb3IgdGhlIHRlc3RzIG9mIG9udGltZQ=="
	with, without, plugged := freeport.Get(t), freeport.Get(t), freeport.Get(t)
	knot := startKnotPrimary(t, "example.test", secondaryZone(1, "www A 192.0.2.1"), with, secret)
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	block := func(port int, extra string) string {
		return fmt.Sprintf("example.test:%d {\n    bind 127.0.0.1\n%s    zonestore {\n        secondary example.test %s\n%s    }\n}\n",
			port, extra, knot.addr, map[bool]string{true: "        tsig xfr. " + secret + " hmac-sha256\n"}[port != without])
	}
	// plugged: the stock tsig plugin knows the key too; it checks a
	// signature first and takes the TSIG record off the message.
	s := startCorefile(t, block(with, "    prometheus "+prom+"\n    codel\n")+block(without, "")+
		block(plugged, "    codel\n    tsig {\n        secret xfr. "+secret+"\n    }\n"), with, "example.test")
	if got := answerA(t, s.addr, "www.example.test."); got != "192.0.2.1" {
		t.Fatalf("with the key: %s", got)
	}
	if got := answerA(t, fmt.Sprintf("127.0.0.1:%d", without), "www.example.test."); got != "SERVFAIL" {
		t.Fatalf("without the key: %s, want SERVFAIL", got)
	}

	knot.update(t, secondaryZone(2, "www A 192.0.2.2"))
	eventually(t, "the new version, by Knot's signed NOTIFY", func() bool {
		return answerA(t, s.addr, "www.example.test.") == "192.0.2.2"
	})
	refused := func() float64 {
		return metric(t, prom, `coredns_zonestore_notifies_total{result="refused",zone="example.test."}`)
	}
	before := refused()
	pluggedAddr := fmt.Sprintf("127.0.0.1:%d", plugged)
	for _, tc := range []struct {
		name, secret string
		net, addr    string
		want         int
	}{
		{"unsigned", "", "udp", s.addr, dns.RcodeNotAuth},
		{"a wrong secret", "d3Jvbmcgc2VjcmV0", "udp", s.addr, dns.RcodeNotAuth},
		{"the key", secret, "udp", s.addr, dns.RcodeSuccess},
		{"unsigned over TCP", "", "tcp", s.addr, dns.RcodeNotAuth},
		{"the key over TCP", secret, "tcp", s.addr, dns.RcodeSuccess},
		{"the key, through the tsig plugin", secret, "udp", pluggedAddr, dns.RcodeSuccess},
		{"unsigned, through the tsig plugin", "", "udp", pluggedAddr, dns.RcodeNotAuth},
		{"a wrong secret, to the tsig plugin", "d3Jvbmcgc2VjcmV0", "udp", pluggedAddr, dns.RcodeNotAuth}, // its answer, not counted here
		{"an unknown key, to the tsig plugin", "d3Jvbmcgc2VjcmV0", "udp", pluggedAddr, dns.RcodeNotAuth}, // BADKEY, sent by codel's writer
	} {
		m := new(dns.Msg)
		m.SetNotify("example.test.")
		c := &dns.Client{Net: tc.net, Timeout: 2 * time.Second}
		if tc.secret != "" {
			key := "xfr."
			if strings.HasPrefix(tc.name, "an unknown key") {
				key = "other."
			}
			m.SetTsig(key, dns.HmacSHA256, 300, time.Now().Unix())
			c.TsigSecret = map[string]string{key: tc.secret}
		}
		r, _, err := c.Exchange(m, tc.addr)
		if tc.want == dns.RcodeNotAuth && tc.secret != "" && err == dns.ErrAuth {
			err = nil // the client checks the unsigned NOTAUTH against its wrong secret
		}
		if err != nil || r.Rcode != tc.want {
			t.Fatalf("NOTIFY %s: %v %v, want %s", tc.name, err, r, dns.RcodeToString[tc.want])
		}
		if tc.want == dns.RcodeSuccess && r.IsTsig() == nil {
			t.Fatalf("NOTIFY %s: the answer is not signed", tc.name)
		}
	}
	if got := refused() - before; got != 4 {
		t.Fatalf("%v refused NOTIFYs counted, want 4", got)
	}
}

// TestSecondaryLimits: the block's limits reach its secondary zones. With
// `max_records 3`, a zone of Knot's of five records is never served
// (SERVFAIL), the failure logged and counted, while the same zone beside
// it without the limit is; with `refresh 0s 1s`, the zone is asked for
// its serial every second, though its SOA says an hour.
func TestSecondaryLimits(t *testing.T) {
	free, small, often := freeport.Get(t), freeport.Get(t), freeport.Get(t)
	knot := startKnotPrimary(t, "example.test", secondaryZone(1, "www A 192.0.2.1", "mail A 192.0.2.2"), free, "")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	block := func(port int, limits string) string {
		return fmt.Sprintf("example.test:%d {\n    bind 127.0.0.1\n    prometheus %s\n    zonestore {\n        secondary example.test %s\n%s    }\n}\n",
			port, prom, knot.addr, limits)
	}
	s := startCorefile(t, block(free, "")+block(small, "        max_records 3\n")+block(often, "        refresh 0s 1s\n"), free, "example.test")
	if got := answerA(t, s.addr, "www.example.test."); got != "192.0.2.1" {
		t.Fatalf("without a limit: www %s", got)
	}
	smallAddr := fmt.Sprintf("127.0.0.1:%d", small)
	eventually(t, "the limit's failure logged", func() bool { return strings.Contains(s.log.String(), "more than max_records 3") })
	if got := answerA(t, smallAddr, "www.example.test."); got != "SERVFAIL" {
		t.Fatalf("a zone of 5 records with max_records 3: www %s, want SERVFAIL", got)
	}
	if got := answerA(t, fmt.Sprintf("127.0.0.1:%d", often), "www.example.test."); got != "192.0.2.1" {
		t.Fatalf("with refresh 0s 1s: www %s", got)
	}
	// Three blocks share the metric's series, one zone label; only the
	// last refreshes without news.
	current := func() float64 {
		return metric(t, prom, `coredns_zonestore_transfers_total{result="current",type="current",zone="example.test."}`)
	}
	before := current()
	time.Sleep(3 * time.Second)
	if n := current() - before; n < 2 {
		t.Errorf("%v refreshes in 3 s with refresh 0s 1s, want 2 or more", n)
	}
}

// TestUnreachablePrimaryMetric: a primary that refuses every connection
// (nothing listens on its port) is held as unreachable once it has failed
// twice in a row, and says so in primary_unreachable; the zone it feeds
// is answered SERVFAIL, and a zone of a live primary beside it is served.
func TestUnreachablePrimaryMetric(t *testing.T) {
	port, closed := freeport.Get(t), freeport.Get(t)
	knot := startKnotPrimary(t, "example.test", zoneText("example.test", 1, "www A 192.0.2.1"), port, "") // expire two weeks
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	dead := fmt.Sprintf("127.0.0.1:%d", closed)
	s := startCorefile(t, fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    prometheus %s\n    zonestore {\n        secondary example.test %s\n        secondary dead.test %s\n    }\n}\n",
		port, prom, knot.addr, dead), port, "example.test")
	series := fmt.Sprintf(`coredns_zonestore_primary_unreachable{primary="%s"}`, dead)
	eventually(t, "the dead primary held", func() bool { return metric(t, prom, series) == 1 })
	if got := answerA(t, s.addr, "www.dead.test."); got != "SERVFAIL" {
		t.Errorf("a zone of the dead primary: %s, want SERVFAIL", got)
	}
	if got := answerA(t, s.addr, "www.example.test."); got != "192.0.2.1" {
		t.Errorf("a zone of the live primary: %s", got)
	}
	if b := scrape(t, prom); strings.Contains(string(b), knot.addr+`"} 1`) {
		t.Error("the live primary held")
	}
	if !strings.Contains(s.log.String(), "Primary "+dead+" did not answer twice in a row") {
		t.Errorf("the hold not logged:\n%s", s.log.String())
	}
}
