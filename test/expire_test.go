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

// startKnotSecondary starts Knot as a secondary of origin from primary
// (host:port), with conf (a zone's items, indented) for the zone, and
// transfers allowed from 127.0.0.1.
func startKnotSecondary(t testing.TB, origin, primary, conf string) *server {
	t.Helper()
	bin := knotd(t)
	dir := t.TempDir()
	port := freeport.Get(t)
	host, pport, _ := strings.Cut(primary, ":")
	var b strings.Builder
	knotServer(&b, dir, port, "info")
	fmt.Fprintf(&b, "remote:\n  - id: primary\n    address: %s@%s\n", host, pport)
	b.WriteString("acl:\n  - id: xfr\n    address: 127.0.0.1\n    action: transfer\n")
	fmt.Fprintf(&b, "zone:\n  - domain: %s\n    master: primary\n    acl: xfr\n    zonefile-sync: -1\n    journal-content: none\n%s", origin, conf)
	path := filepath.Join(dir, "knot.conf")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return start(t, "knotd", exec.Command(bin, "-c", path), port, origin)
}

// expireAnswered asks addr for www.example.test. A, with an EXPIRE option
// where ask is set, and returns the EXPIRE the answer carries, if any.
func expireAnswered(t testing.TB, addr string, ask, tcp bool) (uint32, bool) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion("www.example.test.", dns.TypeA)
	m.SetEdns0(1232, false)
	if ask {
		m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_EXPIRE{Code: dns.EDNS0EXPIRE, Empty: true}}
	}
	r, err := exchange(t, addr, m, tcp)
	if err != nil {
		t.Fatal(err)
	}
	if r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
		t.Fatalf("www.example.test. A from %s: %s, %d records", addr, dns.RcodeToString[r.Rcode], len(r.Answer))
	}
	if o := r.IsEdns0(); o != nil {
		for _, e := range o.Option {
			if x, ok := e.(*dns.EDNS0_EXPIRE); ok {
				if x.Empty {
					t.Fatalf("%s answered an empty EXPIRE option", addr)
				}
				return x.Expire, true
			}
		}
	}
	return 0, false
}

// TestExpireOptionAsKnot: RFC 7314's EXPIRE along a chain of secondaries:
// Knot's primary; a Knot secondary of it that serves the zone 60 s at
// most without a refresh (expire-max-interval); ontime, the chain,
// following that secondary; and a Knot secondary of ontime. Asked, ontime
// answers what the Knot secondary's EXPIRE left it, 60 s or a little
// less, where the zone's SOA says two weeks: the expire it would otherwise
// count from each refresh; and its transfer to the last Knot carries it,
// so that Knot too expires the zone within 60 s. The same zone from a
// file, whose master copy ontime holds, answers its SOA's expire, as
// Knot's primary does. A query that does not ask gets no EXPIRE, from
// Knot or from ontime, over UDP or TCP.
func TestExpireOptionAsKnot(t *testing.T) {
	text := zoneText("example.test", 1, "www A 192.0.2.1")
	primary := startKnotPrimaries(t, []primaryZone{{origin: "example.test", text: text}}, nil, "", "whole")
	mid := startKnotSecondary(t, "example.test", primary.addr, "    expire-max-interval: 60\n")
	file := filepath.Join(t.TempDir(), "example.test.zone")
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	sec, own := freeport.Get(t), freeport.Get(t)
	prom := freeport.Get(t)
	corefile := fmt.Sprintf("example.test:%d {\n    bind 127.0.0.1\n    prometheus 127.0.0.1:%d\n    codel\n    fastpack\n    transfer {\n        to *\n    }\n    zonestore {\n        secondary example.test %s\n    }\n}\n", sec, prom, mid.addr) +
		fmt.Sprintf("example.test:%d {\n    bind 127.0.0.1\n    zonestore %s example.test\n}\n", own, file)
	s := startCorefile(t, corefile, sec, "example.test")
	ownAddr := fmt.Sprintf("127.0.0.1:%d", own)
	last := startKnotSecondary(t, "example.test", s.addr, "")

	// The zone's expiry, for an alert, is what the EXPIRE left it.
	expires := metric(t, fmt.Sprintf("127.0.0.1:%d", prom), `coredns_zonestore_secondary_expire_timestamp_seconds{zone="example.test."}`)
	if now := float64(time.Now().Unix()); expires < now+50 || expires > now+61 {
		t.Errorf("example.test. expires at %v, %v s from now; want 60 s at most, as its primary's EXPIRE said", expires, expires-now)
	}
	for _, tcp := range []bool{false, true} {
		knotLeft, ok := expireAnswered(t, mid.addr, true, tcp)
		if !ok || knotLeft > 60 {
			t.Fatalf("the Knot secondary answered EXPIRE %d (%v), want 60 at most: the test's premise", knotLeft, ok)
		}
		got, ok := expireAnswered(t, s.addr, true, tcp)
		if !ok || got > 60 || got+5 < knotLeft {
			t.Errorf("tcp %v: ontime's secondary answered EXPIRE %d (%v), want what its primary's left, %d s or a little less; the SOA says 1209600", tcp, got, ok, knotLeft)
		}
		want, ok := expireAnswered(t, primary.addr, true, tcp)
		if !ok || want != 1209600 {
			t.Fatalf("Knot's primary answered EXPIRE %d (%v), want the SOA's 1209600", want, ok)
		}
		if got, ok := expireAnswered(t, ownAddr, true, tcp); !ok || got != want {
			t.Errorf("tcp %v: ontime with the master copy answered EXPIRE %d (%v), want the SOA's %d as Knot's primary", tcp, got, ok, want)
		}
		if got, ok := expireAnswered(t, last.addr, true, tcp); !ok || got > 60 {
			t.Errorf("tcp %v: the Knot secondary of ontime answered EXPIRE %d (%v), want 60 at most: what ontime's transfer said", tcp, got, ok)
		}
		for _, addr := range []string{mid.addr, s.addr, ownAddr, last.addr} {
			if got, ok := expireAnswered(t, addr, false, tcp); ok {
				t.Errorf("tcp %v: %s answered EXPIRE %d to a query that did not ask", tcp, addr, got)
			}
		}
	}
}

// TestSignedTransferCarriesExpire: through the chain, a transfer
// signed with TSIG and asking for EXPIRE is answered with it (the zone's
// master copy here: its SOA's expire) in an OPT record before the TSIG
// record, whose signature covers it and verifies; a transfer that does
// not ask gets no OPT record.
func TestSignedTransferCarriesExpire(t *testing.T) {
	const secret = "c2VjcmV0IGtleSBmb3IgdGhlIHRlc3RzIG9mIG9udGltZQ=="
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	prom := freeport.Get(t)
	s := startCoreDNS(t, fmt.Sprintf("    prometheus 127.0.0.1:%d\n    codel\n    fastpack\n    tsig {\n        secret xfr. %s\n        require AXFR IXFR\n    }\n    transfer {\n        to *\n    }\n    zonestore %s example.org", prom, secret, zf), "example.org")
	for _, ask := range []bool{true, false} {
		m := new(dns.Msg)
		m.SetAxfr("example.org.")
		if ask {
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_EXPIRE{Code: dns.EDNS0EXPIRE, Empty: true}}
		}
		m.SetTsig("xfr.", dns.HmacSHA256, 300, time.Now().Unix())
		conn, err := dns.Dial("tcp", s.addr)
		if err != nil {
			t.Fatal(err)
		}
		tr := &dns.Transfer{Conn: conn, TsigSecret: map[string]string{"xfr.": secret}}
		if err := tr.WriteMsg(m); err != nil {
			t.Fatal(err)
		}
		r, err := tr.ReadMsg() // the zone's one message, its TSIG verified
		conn.Close()
		if err != nil {
			t.Fatalf("ask %v: a signed AXFR: %v", ask, err)
		}
		if r.Rcode != dns.RcodeSuccess || len(r.Answer) != len(axfrOf(t, zf)) || r.IsTsig() == nil {
			t.Fatalf("ask %v: %s, %d records, signed %v", ask, dns.RcodeToString[r.Rcode], len(r.Answer), r.IsTsig() != nil)
		}
		o := r.IsEdns0()
		if !ask {
			if o != nil {
				t.Fatalf("an AXFR that did not ask for EXPIRE answered with an OPT record: %v", o)
			}
			continue
		}
		var got []string
		if o != nil {
			for _, e := range o.Option {
				got = append(got, e.String())
			}
		}
		if len(got) != 1 || got[0] != "1209600" {
			t.Fatalf("the signed AXFR's EXPIRE: %q, want the SOA's 1209600", got)
		}
	}
}
