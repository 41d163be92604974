package test

import (
	"crypto"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	_ "github.com/ontimedns/ontime/alias/record" // the test's own zone texts hold ALIAS
	"github.com/ontimedns/ontime/internal/freeport"
)

// The alias tests run two real servers: an upstream, the same binary with
// stock plugins only (file for the targets, erratic to delay or drop,
// template to fail), and ontime with alias and zonestore asking it.

const targetZone = `$ORIGIN target.test.
$TTL 60
@ SOA ns hostmaster 1 7200 3600 1209600 120
@ NS ns
ns A 192.0.2.53
a A 192.0.2.1
a A 192.0.2.2
a 30 AAAA 2001:db8::1
txtonly TXT "no address here"
cname 20 CNAME a
short 1 A 192.0.2.9
`

// startCorefile runs the binary on a whole Corefile (several server
// blocks), waiting for the zones to answer on port.
func startCorefile(t testing.TB, corefile string, port int, zones ...string) *server {
	t.Helper()
	path := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(path, []byte(corefile), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(corednsBin, "-conf", path)
	cmd.Dir = repoRoot(t)
	return start(t, "coredns", cmd, port, zones...)
}

type upstream struct {
	*server
	metrics string
}

// slowDelay is how late slow.test answers: within the alias timeout of
// the tests (300 ms), and long enough that concurrent queries overlap.
var slowDelay = "150ms"

// startUpstream serves target.test from a file, slow.test with every
// answer slowDelay late, drop.test never answering, trunc.test truncating
// every other answer, and servfail.test answering SERVFAIL.
func startUpstream(t testing.TB) upstream {
	t.Helper()
	dir := t.TempDir()
	zf := filepath.Join(dir, "db.target.test")
	if err := os.WriteFile(zf, []byte(targetZone), 0o644); err != nil {
		t.Fatal(err)
	}
	port, metrics := freeport.Get(t), fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	block := func(zone, body string) string {
		return fmt.Sprintf("%s:%d {\n    bind 127.0.0.1\n    prometheus %s\n    %s\n}\n", zone, port, metrics, body)
	}
	corefile := block("target.test", "file "+zf) +
		block("slow.test", "erratic {\n        delay 1 "+slowDelay+"\n    }") +
		block("drop.test", "erratic {\n        drop 1\n    }") +
		block("trunc.test", "erratic {\n        truncate 1\n    }") +
		block("servfail.test", "template IN ANY servfail.test {\n        rcode SERVFAIL\n    }")
	return upstream{startCorefile(t, corefile, port, "target.test"), metrics}
}

// aliasZone is example.org with an ALIAS for every rule.
var aliasZone = []string{
	"@ 300 ALIAS a.target.test.",
	"@ MX 10 mail",
	"mail A 192.0.2.25",
	"www CNAME @",
	"clamp 10 ALIAS a.target.test.",
	"chain 300 ALIAS cname.target.test.",
	"short 300 ALIAS short.target.test.",
	"nodata 300 ALIAS txtonly.target.test.",
	"nx 300 ALIAS missing.target.test.",
	"own 300 ALIAS a.target.test.",
	"own 300 A 198.51.100.7",
	"ownfail 300 ALIAS x.drop.test.",
	"ownfail 300 A 198.51.100.8",
	"ownfail 300 TXT \"kept\"",
	"slow 300 ALIAS x.slow.test.",
	"shared 300 ALIAS s.slow.test.",
	"timeout 300 ALIAS x.drop.test.",
	"trunc 300 ALIAS x.trunc.test.",
	"fail 300 ALIAS x.servfail.test.",
}

func ask(t testing.TB, addr, name string, qtype uint16, tcp bool) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	r, err := exchange(t, addr, m, tcp)
	if err != nil {
		t.Fatalf("%s %s: %v", name, dns.TypeToString[qtype], err)
	}
	return r
}

// rrs is a section in presentation form, sorted, without the class.
func rrs(section []dns.RR) string {
	var out []string
	for _, rr := range section {
		out = append(out, strings.Replace(rr.String(), "\tIN\t", " ", 1))
	}
	sort.Strings(out)
	return strings.ReplaceAll(strings.Join(out, "; "), "\t", " ")
}

// TestAliasAnswers covers the rules of an ALIAS answer against a real
// upstream, over UDP (through codel's workers: the lookup leaves the
// worker and comes back) and over TCP (in place).
func TestAliasAnswers(t *testing.T) {
	up := startUpstream(t)
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, aliasZone...)
	metrics := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    codel\n    alias {\n        upstream %s\n        timeout 300ms\n    }\n    zonestore %s example.org", metrics, up.addr, zf), "example.org")

	type want struct {
		rcode      int
		answer, ns string
	}
	soa := "example.org. 300 SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300"
	for _, tc := range []struct {
		name  string
		qtype uint16
		want  want
	}{
		// The target's addresses under the owner, TTL min(ALIAS 300, upstream 60).
		{"example.org.", dns.TypeA, want{0, "example.org. 60 A 192.0.2.1; example.org. 60 A 192.0.2.2", ""}},
		{"example.org.", dns.TypeAAAA, want{0, "example.org. 30 AAAA 2001:db8::1", ""}},
		// Through a CNAME in the zone.
		{"www.example.org.", dns.TypeA, want{0, "example.org. 60 A 192.0.2.1; example.org. 60 A 192.0.2.2; www.example.org. 300 CNAME example.org.", ""}},
		// The ALIAS's TTL is the smaller.
		{"clamp.example.org.", dns.TypeA, want{0, "clamp.example.org. 10 A 192.0.2.1; clamp.example.org. 10 A 192.0.2.2", ""}},
		// Upstream's CNAME chain: its smallest TTL (20).
		{"chain.example.org.", dns.TypeA, want{0, "chain.example.org. 20 A 192.0.2.1; chain.example.org. 20 A 192.0.2.2", ""}},
		// The target has no A, or does not exist: NODATA with the SOA.
		{"nodata.example.org.", dns.TypeA, want{0, "", soa}},
		{"nx.example.org.", dns.TypeA, want{0, "", soa}},
		// The name's own A gives way to the target's (the ANAME draft).
		{"own.example.org.", dns.TypeA, want{0, "own.example.org. 60 A 192.0.2.1; own.example.org. 60 A 192.0.2.2", ""}},
		// ... and is the fallback when the upstreams fail.
		{"ownfail.example.org.", dns.TypeA, want{0, "ownfail.example.org. 300 A 198.51.100.8", ""}},
		// Upstream failures: SERVFAIL.
		{"timeout.example.org.", dns.TypeA, want{dns.RcodeServerFailure, "", ""}},
		{"fail.example.org.", dns.TypeA, want{dns.RcodeServerFailure, "", ""}},
		// A slow upstream within the timeout, and one that truncates (TCP).
		{"slow.example.org.", dns.TypeA, want{0, "slow.example.org. 0 A 192.0.2.53", ""}},
		{"trunc.example.org.", dns.TypeA, want{0, "trunc.example.org. 0 A 192.0.2.53", ""}},
		// Other types, ANY, and ALIAS itself: as the zone holds them, no lookup.
		{"example.org.", dns.TypeMX, want{0, "example.org. 300 MX 10 mail.example.org.", ""}},
		{"ownfail.example.org.", dns.TypeTXT, want{0, `ownfail.example.org. 300 TXT "kept"`, ""}},
		{"example.org.", 65401, want{0, "", soa}},
		{"nodata.example.org.", dns.TypeANY, want{0, "", soa}},
	} {
		for _, tcp := range []bool{false, true} {
			r := ask(t, s.addr, tc.name, tc.qtype, tcp)
			got := want{r.Rcode, rrs(r.Answer), rrs(r.Ns)}
			if got != tc.want {
				t.Errorf("%s %s (tcp %v):\n got %+v\nwant %+v", tc.name, dns.TypeToString[tc.qtype], tcp, got, tc.want)
			}
			for _, rr := range append(r.Answer, r.Ns...) {
				if rr.Header().Rrtype == 65401 {
					t.Errorf("%s: an ALIAS record sent to a client: %v", tc.name, rr)
				}
			}
		}
	}
	// CD cleared, as in every authoritative answer (RFC 4035 section
	// 3.1.6): a resolved ALIAS and a failed one.
	for _, name := range []string{"example.org.", "fail.example.org."} {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		m.CheckingDisabled = true
		if r, err := exchange(t, s.addr, m, false); err != nil || r.CheckingDisabled || len(r.Answer) == 0 && r.Rcode != dns.RcodeServerFailure {
			t.Errorf("%s A with CD: %v, %v: want an answer or SERVFAIL, CD clear", name, r, err)
		}
	}
	server := "dns://" + s.addr
	lookups := func(result string) float64 {
		return metric(t, metrics, `coredns_alias_lookups_total{result="`+result+`",server="`+server+`"}`)
	}
	if lookups("timeout") < 2 || lookups("error") < 1 {
		t.Errorf("failed lookups counted: timeout %v (want 2 or more), error %v (want 1 or more)", lookups("timeout"), lookups("error"))
	}
	if tcp := metric(t, up.metrics, fmt.Sprintf(`coredns_dns_requests_total{family="1",proto="tcp",server="dns://%s",type="A",view="",zone="trunc.test."}`, up.addr)); tcp < 1 {
		t.Errorf("a truncated upstream answer was not asked again over TCP (%v TCP queries)", tcp)
	}
	if n := metric(t, metrics, `coredns_alias_lookup_duration_seconds_count{result="ok",server="`+server+`"}`); n < 5 {
		t.Errorf("lookup latency histogram counted %v good lookups", n)
	}
}

// TestAliasCachesSharesAndExpires: an answer is cached for its TTL, then
// asked again; concurrent queries for one target share one upstream query.
func TestAliasCachesSharesAndExpires(t *testing.T) {
	up := startUpstream(t)
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, aliasZone...)
	metrics := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    codel\n    alias {\n        upstream %s\n    }\n    zonestore %s example.org", metrics, up.addr, zf), "example.org")
	server := "dns://" + s.addr
	lookups := func(result string) float64 {
		return metric(t, metrics, `coredns_alias_lookups_total{result="`+result+`",server="`+server+`"}`)
	}
	upstreamQueries := func(zone string) float64 {
		// The upstream counts a query when its handler returns, just after
		// it answered: give the last one that moment.
		time.Sleep(100 * time.Millisecond)
		return metric(t, up.metrics, fmt.Sprintf(`coredns_dns_requests_total{family="1",proto="udp",server="dns://%s",type="A",view="",zone="%s"}`, up.addr, zone))
	}

	// Cache: TTL 60 upstream; three queries, one lookup.
	for range 3 {
		if got := rrs(ask(t, s.addr, "clamp.example.org.", dns.TypeA, false).Answer); !strings.Contains(got, "192.0.2.1") {
			t.Fatalf("clamp: %s", got)
		}
	}
	if miss, hit := lookups("miss"), lookups("hit"); miss != 1 || hit != 2 {
		t.Fatalf("three queries for one cached target: %v misses, %v hits; want 1 and 2", miss, hit)
	}
	// Expiry: TTL 1 upstream; asked again once it has passed.
	before := upstreamQueries("target.test.")
	ask(t, s.addr, "short.example.org.", dns.TypeA, false)
	ask(t, s.addr, "short.example.org.", dns.TypeA, false)
	if got := upstreamQueries("target.test.") - before; got != 1 {
		t.Fatalf("two queries within the TTL asked upstream %v times, want 1", got)
	}
	time.Sleep(1100 * time.Millisecond)
	if got := rrs(ask(t, s.addr, "short.example.org.", dns.TypeA, false).Answer); got != "short.example.org. 1 A 192.0.2.9" {
		t.Fatalf("short after expiry: %q", got)
	}
	if got := upstreamQueries("target.test.") - before; got != 2 {
		t.Fatalf("a query after the TTL: upstream asked %v times in all, want 2", got)
	}

	// Shared: 20 queries at once for a target that answers late (TTL
	// 0, never cached) make one upstream query.
	before, shared := upstreamQueries("slow.test."), lookups("shared")
	var wg sync.WaitGroup
	errs := make(chan string, 20)
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := rrs(ask(t, s.addr, "shared.example.org.", dns.TypeA, false).Answer); got != "shared.example.org. 0 A 192.0.2.53" {
				errs <- got
			}
		}()
	}
	wg.Wait()
	close(errs)
	for got := range errs {
		t.Fatalf("shared: %q", got)
	}
	asked := upstreamQueries("slow.test.") - before
	if asked < 1 || asked > 3 || lookups("shared")-shared < 17 {
		t.Fatalf("20 concurrent queries asked upstream %v times and shared %v lookups; want 1 (a slow scheduler: up to 3) and the rest shared", asked, lookups("shared")-shared)
	}
}

// TestAliasServesStale: with serve_stale, the last good answer outlives
// its upstream; without, the same failure is SERVFAIL. Neither server
// has codel: alias waits in place.
func TestAliasServesStale(t *testing.T) {
	up := startUpstream(t)
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, aliasZone...)
	p1, p2 := freeport.Get(t), freeport.Get(t)
	metrics := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	block := func(port int, extra string) string {
		return fmt.Sprintf("example.org:%d {\n    bind 127.0.0.1\n    prometheus %s\n    alias {\n        upstream %s\n        timeout 300ms\n%s    }\n    zonestore %s\n}\n", port, metrics, up.addr, extra, zf)
	}
	startCorefile(t, block(p1, "        serve_stale 1h\n")+block(p2, ""), p1, "example.org")
	stale, plain := fmt.Sprintf("127.0.0.1:%d", p1), fmt.Sprintf("127.0.0.1:%d", p2)
	for _, addr := range []string{stale, plain} {
		if got := rrs(ask(t, addr, "short.example.org.", dns.TypeA, false).Answer); got != "short.example.org. 1 A 192.0.2.9" {
			t.Fatalf("%s: %q", addr, got)
		}
	}
	up.stop()
	time.Sleep(1100 * time.Millisecond)
	if got := rrs(ask(t, stale, "short.example.org.", dns.TypeA, false).Answer); got != "short.example.org. 30 A 192.0.2.9" {
		t.Errorf("serve_stale, upstream gone: %q, want the last answer with TTL 30", got)
	}
	if r := ask(t, plain, "short.example.org.", dns.TypeA, false); r.Rcode != dns.RcodeServerFailure {
		t.Errorf("no serve_stale, upstream gone: %s, want SERVFAIL", dns.RcodeToString[r.Rcode])
	}
	if n := metric(t, metrics, fmt.Sprintf(`coredns_alias_lookups_total{result="stale",server="dns://127.0.0.1:%d"}`, p1)); n != 1 {
		t.Errorf("stale answers counted: %v, want 1", n)
	}
}

// TestAliasRefusedAtLoad: CNAME beside ALIAS, or two ALIAS at one name,
// stop the server with an error that says so.
func TestAliasRefusedAtLoad(t *testing.T) {
	for _, tc := range []struct{ records, want string }{
		{"www CNAME @\nwww ALIAS a.target.test.", `"www.example.org." has a CNAME beside ALIAS data`},
		{"www ALIAS a.target.test.\nwww ALIAS b.target.test.", `"www.example.org." has 2 ALIAS records, want 1`},
	} {
		zf := filepath.Join(t.TempDir(), "db.example.org")
		writeZone(t, zf, 1, tc.records)
		conf := filepath.Join(t.TempDir(), "Corefile")
		os.WriteFile(conf, []byte(fmt.Sprintf(".:%d {\n    alias {\n        upstream 127.0.0.1:9\n    }\n    zonestore %s example.org\n}\n", freeport.Get(t), zf)), 0o644)
		out, err := exec.Command(corednsBin, "-conf", conf).CombinedOutput()
		if err == nil || !strings.Contains(string(out), tc.want) {
			t.Errorf("want a fatal error saying %s; got %v:\n%s", tc.want, err, out)
		}
	}
}

// newKey makes a zone signing key and writes it as the dnssec plugin
// reads it (Kzone.+013+tag.key and .private), returning the base path.
func newKey(t testing.TB, dir, zone string) (*dns.DNSKEY, crypto.Signer, string) {
	t.Helper()
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: zone, Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 300},
		Flags: 257, Protocol: 3, Algorithm: dns.ECDSAP256SHA256}
	priv, err := k.Generate(256)
	if err != nil {
		t.Fatal(err)
	}
	base := filepath.Join(dir, fmt.Sprintf("K%s+%03d+%05d", zone, k.Algorithm, k.KeyTag()))
	os.WriteFile(base+".key", []byte(k.String()+"\n"), 0o644)
	os.WriteFile(base+".private", []byte(k.PrivateKeyString(priv)), 0o600)
	return k, priv.(crypto.Signer), base
}

func verify(t testing.TB, key *dns.DNSKEY, section []dns.RR, covered uint16) {
	t.Helper()
	var set []dns.RR
	var sig *dns.RRSIG
	for _, rr := range section {
		if s, ok := rr.(*dns.RRSIG); ok && s.TypeCovered == covered {
			sig = s
		} else if rr.Header().Rrtype == covered {
			set = append(set, rr)
		}
	}
	if sig == nil || len(set) == 0 {
		t.Fatalf("no signed %s RRset in %v", dns.TypeToString[covered], section)
	}
	if err := sig.Verify(key, set); err != nil || !sig.ValidityPeriod(time.Now()) {
		t.Fatalf("RRSIG over %v does not validate: %v", set, err)
	}
}

// TestAliasSignedOnline: with the dnssec plugin holding the zone's key,
// the synthesized addresses are signed and validate against the DNSKEY
// the server publishes.
func TestAliasSignedOnline(t *testing.T) {
	up := startUpstream(t)
	dir := t.TempDir()
	zf := filepath.Join(dir, "db.example.org")
	writeZone(t, zf, 1, aliasZone...)
	_, _, base := newKey(t, dir, "example.org.")
	port := freeport.Get(t)
	s := startCorefile(t, fmt.Sprintf("example.org:%d {\n    bind 127.0.0.1\n    codel\n    dnssec {\n        key file %s\n    }\n    alias {\n        upstream %s\n    }\n    zonestore %s\n}\n", port, base, up.addr, zf), port, "example.org")

	m := new(dns.Msg)
	m.SetQuestion("example.org.", dns.TypeDNSKEY)
	m.SetEdns0(4096, true)
	r, err := exchange(t, s.addr, m, true)
	if err != nil || len(r.Answer) == 0 {
		t.Fatalf("DNSKEY: %v %v", err, r)
	}
	key := r.Answer[0].(*dns.DNSKEY)
	for _, name := range []string{"example.org.", "www.example.org."} {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		m.SetEdns0(4096, true)
		r, err := exchange(t, s.addr, m, false)
		if err != nil || r.Rcode != dns.RcodeSuccess {
			t.Fatalf("%s: %v %v", name, err, r)
		}
		verify(t, key, r.Answer, dns.TypeA)
	}
}

// TestAliasUnsignedInASignedZone: a pre-signed zone, and no dnssec plugin
// to sign online: the answer is sent unsigned (a validator will call it
// bogus), logged once and counted. ontime does not refuse the zone: one
// ALIAS must not take a whole zone down.
func TestAliasUnsignedInASignedZone(t *testing.T) {
	up := startUpstream(t)
	dir := t.TempDir()
	key, signer, _ := newKey(t, dir, "example.org.")
	zone := []dns.RR{}
	for _, text := range []string{
		"example.org. 300 SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300",
		"example.org. 300 NS ns1.example.org.",
		"ns1.example.org. 300 A 192.0.2.53",
		key.String(),
	} {
		rr, err := dns.NewRR(text)
		if err != nil {
			t.Fatal(err)
		}
		zone = append(zone, rr)
	}
	var b strings.Builder
	for _, rr := range zone {
		sig := &dns.RRSIG{Hdr: dns.RR_Header{Ttl: rr.Header().Ttl}, KeyTag: key.KeyTag(), SignerName: "example.org.", Algorithm: key.Algorithm,
			Inception: uint32(time.Now().Add(-time.Hour).Unix()), Expiration: uint32(time.Now().Add(24 * time.Hour).Unix())}
		if err := sig.Sign(signer, []dns.RR{rr}); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\n%s\n", rr, sig)
	}
	b.WriteString("example.org. 300 IN ALIAS a.target.test.\n")
	zf := filepath.Join(dir, "db.example.org")
	os.WriteFile(zf, []byte(b.String()), 0o644)
	metrics := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    alias {\n        upstream %s\n    }\n    zonestore %s example.org", metrics, up.addr, zf), "example.org")

	for range 2 {
		m := new(dns.Msg)
		m.SetQuestion("example.org.", dns.TypeA)
		m.SetEdns0(4096, true)
		r, err := exchange(t, s.addr, m, false)
		if err != nil {
			t.Fatal(err)
		}
		if got := rrs(r.Answer); got != "example.org. 60 A 192.0.2.1; example.org. 60 A 192.0.2.2" {
			t.Fatalf("answer %q", got)
		}
	}
	if n := metric(t, metrics, `coredns_alias_unsigned_total{server="dns://127.0.0.1`+s.addr[len("127.0.0.1"):]+`"}`); n != 2 {
		t.Errorf("unsigned answers counted: %v, want 2", n)
	}
	if got := strings.Count(s.log.String(), "answered unsigned"); got != 1 {
		t.Errorf("logged %d times, want once:\n%s", got, s.log.String())
	}
}

// TestAliasLateOnReturnIsDropped: behind codel with a 100 ms deadline, a
// query whose lookup takes 150 ms is dropped when it comes back to the
// queue, counted with codel's drops, and answered by nobody; a plain query
// is answered meanwhile.
func TestAliasLateOnReturnIsDropped(t *testing.T) {
	up := startUpstream(t)
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, aliasZone...)
	metrics := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    codel {\n        deadline 100ms\n    }\n    alias {\n        upstream %s\n        timeout 300ms\n    }\n    zonestore %s example.org", metrics, up.addr, zf), "example.org")
	server := "dns://" + s.addr
	drops := func() float64 {
		return metric(t, metrics, `coredns_codel_drops_total{reason="deadline",server="`+server+`"}`)
	}
	before := drops()
	done := make(chan error, 1)
	go func() {
		r, err := queryA(s.addr, "slow.example.org.", "udp", time.Second)
		if err == nil {
			err = fmt.Errorf("answered: %v", r)
		}
		done <- err
	}()
	if got := answerA(t, s.addr, "mail.example.org."); got != "192.0.2.25" {
		t.Fatalf("plain query meanwhile: %s", got)
	}
	if err := <-done; !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("the late query: %v, want no answer", err)
	}
	if got := drops() - before; got != 1 {
		t.Fatalf("codel counted %v deadline drops, want 1", got)
	}
}

// With fastpack, answers to A and AAAA questions pass alias's writer into
// replay: a plain name's answer is kept and written again, and a name
// with an ALIAS is resolved for every query, its answer never kept.
// alias's writer was no replay.Writer, and the Kubernetes example's
// chain kept no A or AAAA answer at all.
func TestAliasBesideReplay(t *testing.T) {
	up := startUpstream(t)
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, aliasZone...)
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNSWith(t, onePAnswer, fmt.Sprintf("    prometheus %s\n    codel\n    fastpack\n    alias {\n        upstream %s\n    }\n    zonestore %s example.org", prom, up.addr, zf), "example.org")
	hits := func() float64 { return metric(t, prom, "coredns_zonestore_replay_hits_total") }
	for range 5 {
		if r := ask(t, s.addr, "mail.example.org.", dns.TypeA, false); rrs(r.Answer) != "mail.example.org. 300 A 192.0.2.25" {
			t.Fatalf("mail: %s", rrs(r.Answer))
		}
	}
	if h := hits(); h < 3 {
		t.Fatalf("%g hits of 5 queries for a name without an ALIAS, want 3 or more (kept at the second miss)", h)
	}
	before := hits()
	for range 5 {
		if r := ask(t, s.addr, "example.org.", dns.TypeA, false); rrs(r.Answer) != "example.org. 60 A 192.0.2.1; example.org. 60 A 192.0.2.2" {
			t.Fatalf("the ALIAS: %s", rrs(r.Answer))
		}
	}
	if h := hits(); h != before {
		t.Fatalf("%g hits for the ALIAS's queries, want none: its answer is resolved each time", h-before)
	}
}
