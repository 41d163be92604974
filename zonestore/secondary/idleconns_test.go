package secondary

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// keepingPrimary is a primary that serves each zone of zones (by origin,
// its records: an AXFR answer, in one message) and keeps each connection
// open after a transfer, as Knot, BIND and miekg/dns's server do; with
// secret, it needs the key xfr. and signs with it. Its SOA answers come
// over UDP. Its quirk, if any: timersAfterFirst signs the answers of a
// connection's later transfers over their timers alone, as if they went
// on from its first (a primary that keeps a transfer's state on its
// connection); sendsTwice sends a connection's first transfer twice.
func keepingPrimary(t testing.TB, secret string, q quirk, zones map[string][]dns.RR) (string, *countingListener) {
	t.Helper()
	var keys map[string]string
	if secret != "" {
		keys = map[string]string{"xfr.": secret}
	}
	var mu sync.Mutex
	transfers := map[string]int{} // by connection
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetReply(r)
		if secret != "" && (r.IsTsig() == nil || w.TsigStatus() != nil) {
			m.Rcode = dns.RcodeNotAuth
			w.WriteMsg(m)
			return
		}
		z, ok := zones[r.Question[0].Name]
		switch {
		case !ok:
			m.Rcode = dns.RcodeNotAuth
		case r.Question[0].Qtype == dns.TypeSOA:
			m.Answer = z[:1]
		default:
			m.Answer = z
		}
		if secret != "" {
			m.SetTsig("xfr.", dns.HmacSHA256, 300, time.Now().Unix())
		}
		if r.Question[0].Qtype != dns.TypeSOA {
			mu.Lock()
			transfers[w.RemoteAddr().String()]++
			later := transfers[w.RemoteAddr().String()] > 1
			mu.Unlock()
			w.TsigTimersOnly(q == timersAfterFirst && later)
			if q == sendsTwice && !later {
				w.WriteMsg(m)
			}
		}
		w.WriteMsg(m)
	})
	return serveCounting(t, h, keys)
}

type quirk int

const (
	none quirk = iota
	timersAfterFirst
	sendsTwice
)

// freshIdle empties the pool of idle connections for the test, and again
// after it: their connections closed, under the pool's lock (a timer of a
// connection another test left may fire meanwhile).
func freshIdle(t testing.TB) {
	drain := func() {
		idle.mu.Lock()
		defer idle.mu.Unlock()
		for _, cs := range idle.by {
			closeIdle(cs)
		}
		clear(idle.by)
		clear(idle.fresh)
	}
	drain()
	t.Cleanup(drain)
}

func manyZones(t *testing.T, n int) (map[string][]dns.RR, []string) {
	zones := map[string][]dns.RR{}
	var origins []string
	for i := range n {
		origin := fmt.Sprintf("z%d.test.", i)
		soa := fmt.Sprintf("%s 300 SOA ns1.%s hostmaster.%s 1 3600 600 86400 300", origin, origin, origin)
		zones[origin] = rrs(t, soa, origin+" 300 NS ns1.example.net.", fmt.Sprintf("www.%s 300 A 192.0.2.%d", origin, i+1), soa)
		origins = append(origins, origin)
	}
	return zones, origins
}

// TestTransfersReuseAConnection: zones transferred one after another from
// a primary that keeps its connections open go over one connection, and
// each is published whole; so does a signed transfer of each from a
// primary that signs each transfer afresh (Knot, BIND).
func TestTransfersReuseAConnection(t *testing.T) {
	zones, origins := manyZones(t, 20)
	for _, secret := range []string{"", "c2VjcmV0IGtleSBmb3IgdGhlIHRlc3Rz"} {
		freshIdle(t)
		addr, primary := keepingPrimary(t, secret, none, zones)
		store := zonestore.NewStore()
		for i, origin := range origins {
			cfg := Config{Origin: origin, Primaries: []string{addr}, Store: store}
			if secret != "" {
				cfg.TSIG = &TSIG{Name: "xfr.", Algorithm: dns.HmacSHA256, Secret: secret}
			}
			if err := New(cfg).Refresh(); err != nil {
				t.Fatalf("key %q, %s: %v", secret, origin, err)
			}
			if got, want := answer(store, "www."+origin), fmt.Sprintf("192.0.2.%d", i+1); got != want {
				t.Fatalf("key %q, www.%s: %s, want %s", secret, origin, got, want)
			}
		}
		if n := primary.accepted.Load(); n != 1 {
			t.Errorf("key %q: %d transfers over %d connections, want 1", secret, len(origins), n)
		}
	}
}

// TestTransfersFromAPrimaryThatKeepsNoConnection: a primary that closes
// its connection after each transfer (the test primary of the other
// tests) has each transfer run again over a new connection when the idle
// one turns out closed, and is still asked over idle connections after:
// a closed one is no fault of the primary's.
func TestTransfersFromAPrimaryThatKeepsNoConnection(t *testing.T) {
	freshIdle(t)
	p := startPrimary(t)
	store := zonestore.NewStore()
	sec := New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: store})
	for serial := 1; serial <= 3; serial++ {
		p.set(uint32(serial), zoneV(t, itoa(uint32(serial)), fmt.Sprintf("www.example.test. 300 A 192.0.2.%d", serial)), nil)
		if err := sec.Refresh(); err != nil {
			t.Fatalf("version %d: %v", serial, err)
		}
		if got, want := answer(store, "www.example.test."), fmt.Sprintf("192.0.2.%d", serial); got != want {
			t.Fatalf("version %d: www %s", serial, got)
		}
		time.Sleep(50 * time.Millisecond) // the primary's close reaches the idle connection
	}
	idle.mu.Lock()
	fresh := idle.fresh[p.addr]
	idle.mu.Unlock()
	if fresh {
		t.Error("a primary that closes its connections is asked over new ones alone")
	}
}

// TestAPrimaryThatFailsOverAReusedConnection: a primary whose second
// signed transfer over a connection does not verify (signed as if it
// went on from the first). The transfer runs again over a new connection
// and succeeds, one line says so, and every later transfer from that
// primary opens its own.
func TestAPrimaryThatFailsOverAReusedConnection(t *testing.T) {
	const secret = "c2VjcmV0IGtleSBmb3IgdGhlIHRlc3Rz"
	freshIdle(t)
	zones, origins := manyZones(t, 5)
	addr, primary := keepingPrimary(t, secret, timersAfterFirst, zones)
	var logged []string
	store := zonestore.NewStore()
	for i, origin := range origins {
		cfg := Config{Origin: origin, Primaries: []string{addr}, Store: store, TSIG: &TSIG{Name: "xfr.", Algorithm: dns.HmacSHA256, Secret: secret},
			Logf: func(format string, args ...any) { logged = append(logged, fmt.Sprintf(format, args...)) }}
		if err := New(cfg).Refresh(); err != nil {
			t.Fatalf("%s: %v", origin, err)
		}
		if got, want := answer(store, "www."+origin), fmt.Sprintf("192.0.2.%d", i+1); got != want {
			t.Fatalf("www.%s: %s, want %s", origin, got, want)
		}
	}
	// The first over one; the second over it, failing, and again over a
	// second; each other over its own.
	if n, want := primary.accepted.Load(), int32(len(origins)); n != want {
		t.Errorf("%d transfers over %d connections, want %d", len(origins), n, want)
	}
	if len(logged) != 1 {
		t.Errorf("logged %q, want one line", logged)
	}
}

// TestALeftoverMessageIsNoAnswer: a primary that sends a transfer twice
// leaves its second copy on the connection; the next transfer over it
// reads a message of another query's ID, and runs again over a new
// connection, and that primary's later transfers open their own.
func TestALeftoverMessageIsNoAnswer(t *testing.T) {
	freshIdle(t)
	zones, origins := manyZones(t, 4)
	addr, primary := keepingPrimary(t, "", sendsTwice, zones)
	store := zonestore.NewStore()
	for i, origin := range origins {
		if err := New(Config{Origin: origin, Primaries: []string{addr}, Store: store}).Refresh(); err != nil {
			t.Fatalf("%s: %v", origin, err)
		}
		if got, want := answer(store, "www."+origin), fmt.Sprintf("192.0.2.%d", i+1); got != want {
			t.Fatalf("www.%s: %s, want %s", origin, got, want)
		}
	}
	if n, want := primary.accepted.Load(), int32(len(origins)); n != want {
		t.Errorf("%d transfers over %d connections, want %d", len(origins), n, want)
	}
}

// TestIdleConnectionsClose: a connection idle past idleTimeout is closed
// and not taken; no more than idlePerPrimary wait for one primary.
func TestIdleConnectionsClose(t *testing.T) {
	freshIdle(t)
	addr, _ := keepingPrimary(t, "", none, nil)
	dial := func() *dns.Conn {
		conn, err := dns.DialTimeout("tcp", addr, time.Second)
		if err != nil {
			t.Fatal(err)
		}
		return conn
	}
	var conns []*dns.Conn
	for range idlePerPrimary + 2 {
		conns = append(conns, dial())
	}
	for _, c := range conns {
		idle.put(addr, c)
	}
	idle.mu.Lock()
	waiting := len(idle.by[addr])
	idle.mu.Unlock()
	if waiting != idlePerPrimary {
		t.Errorf("%d waiting, want %d", waiting, idlePerPrimary)
	}
	if c := idle.take(addr); c != conns[idlePerPrimary-1] {
		t.Fatal("take did not give the newest")
	}
	// The two past the bound are closed.
	for _, c := range conns[idlePerPrimary:] {
		if _, err := c.Write([]byte{0}); err == nil {
			t.Error("a connection past the bound is open")
		}
	}

	setTimeout := func(d time.Duration) { // read by put under the pool's lock
		idle.mu.Lock()
		idleTimeout = d
		idle.mu.Unlock()
	}
	defer setTimeout(idleTimeout)
	setTimeout(20 * time.Millisecond)
	c := dial()
	idle.put(addr, c)
	deadline := time.Now().Add(5 * time.Second)
	for {
		idle.mu.Lock()
		waiting := len(idle.by[addr])
		idle.mu.Unlock()
		if waiting == idlePerPrimary-1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("an idle connection was not closed after its timeout")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := c.Write([]byte{0}); err == nil {
		t.Error("the connection that timed out is open")
	}
}

// BenchmarkMemberTransfer: a catalog member's whole transfer (an AXFR of
// ten records in one message, bench/genzones's zone) over a reused
// connection, built and published: what each of a million members costs
// the secondary, the primary's side apart.
func BenchmarkMemberTransfer(b *testing.B) {
	freshIdle(b)
	const origin = "z1.test."
	soa := origin + " 3600 SOA ns1." + origin + " hostmaster." + origin + " 1 7200 3600 1209600 300"
	zone := rrs(b, soa, origin+" 3600 NS ns1."+origin, origin+" 3600 NS ns2."+origin,
		origin+" 3600 MX 10 mail."+origin, "ns1."+origin+" 3600 A 192.0.2.1", "ns2."+origin+" 3600 A 192.0.2.2",
		"www."+origin+" 3600 A 192.0.2.3", "www."+origin+" 3600 AAAA 2001:db8::3", "mail."+origin+" 3600 A 192.0.2.4",
		"ftp."+origin+" 3600 CNAME www."+origin, soa)
	addr, _ := keepingPrimary(b, "", none, map[string][]dns.RR{origin: zone})
	store := zonestore.NewStore()
	sec := New(Config{Origin: origin, Primaries: []string{addr}, Store: store})
	b.ReportAllocs()
	for b.Loop() {
		store.Remove(origin) // a member's first transfer
		if err := sec.axfr(addr, nil); err != nil {
			b.Fatal(err)
		}
	}
}
