package secondary

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

func TestBounds(t *testing.T) {
	for _, c := range []struct {
		b       Bounds
		seconds uint32
		want    time.Duration
	}{
		{Bounds{}, 3600, time.Hour},
		{Bounds{}, 0, 0},
		{Bounds{Min: 2 * time.Second}, 0, 2 * time.Second},
		{Bounds{Min: 2 * time.Second}, 3600, time.Hour},
		{Bounds{Max: time.Minute}, 3600, time.Minute},
		{Bounds{Max: time.Minute}, 30, 30 * time.Second},
		{Bounds{Min: time.Second, Max: time.Minute}, 1 << 31, time.Minute},
	} {
		if got := c.b.of(c.seconds); got != c.want {
			t.Errorf("%+v of %d s: %v, want %v", c.b, c.seconds, got, c.want)
		}
	}
}

// TestTimersWithinLimits: the waits a refresh leaves before the next, and
// the expire, are the SOA's (refresh 3600, retry 1, expire 600) held
// within the limits.
func TestTimersWithinLimits(t *testing.T) {
	p := startZonesPrimary(t, 600)
	store := zonestore.NewStore()
	z := New(Config{Origin: "timers.test.", Primaries: []string{p.addr}, Store: store, Timeout: 300 * time.Millisecond,
		Limits: Limits{Refresh: Bounds{Max: 10 * time.Minute}, Retry: Bounds{Min: 5 * time.Minute}, Expire: Bounds{Min: time.Hour}}})
	if wait := z.step(); wait != 10*time.Minute {
		t.Errorf("after a good refresh: next in %v, want the refresh (1 h) held to 10m", wait)
	}
	if left := z.expiresIn(store.Get("timers.test.")); left < 59*time.Minute || left > time.Hour {
		t.Errorf("expires in %v, want the expire (600 s) held to 1 h", left)
	}
	z.cfg.Primaries = []string{"127.0.0.1:9"} // nothing there
	if wait := z.step(); wait != 5*time.Minute {
		t.Errorf("after a failed refresh: next in %v, want the retry (1 s) held to 5m", wait)
	}
}

// TestMaxRecords: a version of more than MaxRecords records is never
// published: an AXFR of more fails, an IXFR whose result has more falls
// back to AXFR, and neither replaces the version served.
func TestMaxRecords(t *testing.T) {
	p := startPrimary(t)
	store := zonestore.NewStore()
	ev := &events{}
	sec := New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: store, Events: ev.add, Limits: Limits{MaxRecords: 5}})
	var hosts []string
	for i := range 4 {
		hosts = append(hosts, fmt.Sprintf("h%d.example.test. 300 A 192.0.2.%d", i, i+1))
	}
	p.set(1, zoneV(t, "1", hosts...), nil) // 7 records
	if err := sec.Refresh(); !errors.Is(err, errTooLarge) || store.Get("example.test.") != nil {
		t.Fatalf("an AXFR of 7 records with max 5: %v, zone %v", err, store.Get("example.test."))
	}
	p.set(1, zoneV(t, "1", hosts[:2]...), nil) // 5 records: the limit
	if err := sec.Refresh(); err != nil || answer(store, "h1.example.test.") != "192.0.2.2" {
		t.Fatalf("an AXFR of 5 records: %v, h1 %s", err, answer(store, "h1.example.test."))
	}
	ixfr := rrs(t, soa("2"), soa("1"), soa("2"), hosts[2], hosts[3], soa("2"))
	p.set(2, zoneV(t, "2", hosts...), ixfr)
	cur := store.Get("example.test.")
	if err := sec.Refresh(); !errors.Is(err, errTooLarge) || store.Get("example.test.") != cur {
		t.Fatalf("an IXFR to 7 records: %v; the version changed", err)
	}
	if p.asked() != "SOA IXFR AXFR" {
		t.Fatalf("asked %q, want the AXFR fallback", p.asked())
	}
	if want := "axfr failed, axfr 1, ixfr failed, axfr failed"; ev.String() != want {
		t.Fatalf("events %q, want %q", ev, want)
	}

	// A saved copy of more (written before the limit was lowered) is not
	// served either.
	big, err := wholeZone("example.test.", zoneV(t, "2", hosts...))
	if err != nil {
		t.Fatal(err)
	}
	file := filepath.Join(t.TempDir(), "example.test.zone")
	if err := save(file, big); err != nil {
		t.Fatal(err)
	}
	ev, store = &events{}, zonestore.NewStore()
	New(Config{Origin: "example.test.", Store: store, Events: ev.add, File: file, Limits: Limits{MaxRecords: 5}}).restore()
	if store.Get("example.test.") != nil || ev.String() != "restored failed" {
		t.Fatalf("a saved copy of 7 records with max 5: served %v, events %q", store.Get("example.test.") != nil, ev)
	}
}

// TestMaxRecordsCutsATransferOff: an AXFR that goes on past MaxRecords is
// cut off there, not read to its end, and the primary is not held as
// unreachable for it: it answered.
func TestMaxRecordsCutsATransferOff(t *testing.T) {
	sent := make(chan int, 1)
	addr := serve(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		sent <- sendTransfer(w, r, func(i int) []dns.RR {
			switch {
			case i == 0:
				return zoneV(t, "1")[:3]
			case i > 1000: // 100,000 more, unless the reader goes
				return nil
			}
			var batch []dns.RR
			for j := range 100 {
				batch = append(batch, rrs(t, fmt.Sprintf("h%d-%d.example.test. 300 A 192.0.2.1", i, j))...)
			}
			return batch
		})
	}))
	q := NewScheduler(1)
	t.Cleanup(q.Stop)
	sec := New(Config{Origin: "example.test.", Primaries: []string{addr}, Store: zonestore.NewStore(), Limits: Limits{MaxRecords: 1000}})
	sec.sched.Store(q) // its Scheduler's record of unreachable primaries, without a turn on it
	if err := sec.Refresh(); !errors.Is(err, errTooLarge) {
		t.Fatalf("refresh: %v, want too large", err)
	}
	n := <-sent
	t.Logf("the primary sent %d records", n)
	if n >= 100000 {
		t.Errorf("the primary sent all %d records: the transfer was not cut off", n)
	}
	if _, held := q.unreach.held(addr); held {
		t.Error("a primary that answered held as unreachable")
	}
	q.unreach.mu.Lock()
	misses := q.unreach.by[addr]
	q.unreach.mu.Unlock()
	if misses != nil {
		t.Errorf("a transfer cut off counted as a miss: %+v", misses)
	}
}

// TestTransferTime: a transfer that goes on past TransferTime, each
// message in time, is cut off and fails; the primary, which answered, is
// not held as unreachable.
func TestTransferTime(t *testing.T) {
	addr := serve(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		v := zoneV(t, "1", "www.example.test. 300 A 192.0.2.1")
		sendTransfer(w, r, func(i int) []dns.RR {
			if i >= len(v) {
				return nil
			}
			if i > 0 { // a record every 200 ms: 1 s in all
				time.Sleep(200 * time.Millisecond)
			}
			return v[i : i+1]
		})
	}))
	q := NewScheduler(1)
	t.Cleanup(q.Stop)
	store := zonestore.NewStore()
	sec := New(Config{Origin: "example.test.", Primaries: []string{addr}, Store: store, Limits: Limits{TransferTime: 300 * time.Millisecond}})
	sec.sched.Store(q)
	start := time.Now()
	if err := sec.Refresh(); !errors.Is(err, errTooSlow) || store.Get("example.test.") != nil {
		t.Fatalf("refresh: %v, want too slow, nothing published", err)
	}
	t.Logf("cut off after %v", time.Since(start))
	if _, held := q.unreach.held(addr); held {
		t.Error("a primary that answered held as unreachable")
	}
	sec.cfg.Limits.TransferTime = 0
	if err := sec.Refresh(); err != nil || answer(store, "www.example.test.") != "192.0.2.1" {
		t.Fatalf("without the limit: %v, www %s", err, answer(store, "www.example.test."))
	}
}

// TestSignedTransfersOfManyMessages: AXFR and IXFR signed with a key
// (RFC 8945), each in many messages, every message after the first
// signed over its timers alone; read whole with the key, refused with
// another secret.
func TestSignedTransfersOfManyMessages(t *testing.T) {
	const key, secret = "xfr.", "c2VjcmV0IGtleSBmb3IgdGhlIHRlc3Rz"
	var hosts []string
	for i := range 2000 {
		hosts = append(hosts, fmt.Sprintf("h%d.example.test. 300 A 192.0.%d.%d", i, i/250, i%250+1))
	}
	v1 := zoneV(t, "1", hosts...)
	ixfr := rrs(t, append(append([]string{soa("2"), soa("1")}, hosts[:1000]...), append([]string{soa("2")}, soa("2"))...)...)
	// primary signs its answers with secret; strict, it answers NOTAUTH
	// to a query whose signature does not verify with it.
	primary := func(secret string, strict bool) string {
		addr, _ := serveCounting(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
			if strict && w.TsigStatus() != nil {
				m := new(dns.Msg)
				m.SetRcode(r, dns.RcodeNotAuth)
				w.WriteMsg(m)
				return
			}
			out := v1
			if r.Question[0].Qtype == dns.TypeIXFR {
				out = ixfr
			}
			sendTransfer(w, r, func(i int) []dns.RR { // 50 records a message
				if i*50 >= len(out) {
					return nil
				}
				return out[i*50 : min(i*50+50, len(out))]
			})
		}), map[string]string{key: secret})
		return addr
	}
	addr := primary(secret, true)

	store := zonestore.NewStore()
	sec := New(Config{Origin: "example.test.", Store: store, TSIG: &TSIG{Name: key, Algorithm: dns.HmacSHA256, Secret: secret}})
	if err := sec.axfr(addr, nil); err != nil {
		t.Fatalf("a signed AXFR of %d messages: %v", len(v1)/50+1, err)
	}
	if z := store.Get("example.test."); z == nil || z.Records() != len(v1)-1 {
		t.Fatalf("the AXFR's zone: %v", z)
	}
	if err := sec.ixfr(addr, store.Get("example.test.")); err != nil {
		t.Fatalf("a signed IXFR of many messages: %v", err)
	}
	if z := store.Get("example.test."); z.Serial() != 2 || z.Records() != len(v1)-1-1000 {
		t.Fatalf("the IXFR's zone: serial %d, %d records", z.Serial(), z.Records())
	}
	other := "d3Jvbmcgc2VjcmV0"
	wrong := New(Config{Origin: "example.test.", Store: zonestore.NewStore(), TSIG: &TSIG{Name: key, Algorithm: dns.HmacSHA256, Secret: other}})
	if err := wrong.axfr(addr, nil); err == nil {
		t.Fatal("an AXFR asked with another secret succeeded")
	}
	// A primary that answers whatever the query's signature, signing with
	// its own secret: the answer does not verify, and is not taken.
	if err := wrong.axfr(primary(secret, false), nil); err == nil || !strings.Contains(err.Error(), "TSIG") {
		t.Fatalf("an AXFR signed with another secret: %v, want its TSIG refused", err)
	}
}

// sendTransfer answers r as a primary does, a message a page: page(i) is
// the records of the ith message, nil after the last. It stops where the
// reader goes, and returns how many records it sent.
func sendTransfer(w dns.ResponseWriter, r *dns.Msg, page func(i int) []dns.RR) int {
	ch := make(chan *dns.Envelope)
	done := make(chan struct{})
	go func() { new(dns.Transfer).Out(w, r, ch); close(done) }()
	n := 0
	for i := 0; ; i++ {
		rrs := page(i)
		if rrs == nil {
			close(ch)
			<-done
			w.Hijack()
			w.Close()
			return n
		}
		select {
		case ch <- &dns.Envelope{RR: rrs}:
			n += len(rrs)
		case <-done:
			return n
		}
	}
}
