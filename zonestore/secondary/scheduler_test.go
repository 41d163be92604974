package secondary

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// zonesPrimary is a real DNS server on 127.0.0.1 serving any zone asked
// for (SOA refresh 3600, retry 1, expire as set), counting the queries it
// is answering at once, and holding the answers for a zone whose gate is
// set until the gate is closed. A query counts from its arrival until its
// answer is about to be sent.
type zonesPrimary struct {
	addr           string
	expire         int
	inFlight, most atomic.Int32
	mu             sync.Mutex
	gates          map[string]chan struct{}
	asked          map[string]int
}

func startZonesPrimary(t *testing.T, expire int) *zonesPrimary {
	t.Helper()
	p := &zonesPrimary{expire: expire, gates: map[string]chan struct{}{}, asked: map[string]int{}}
	p.addr = serve(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		n := p.inFlight.Add(1)
		for m := p.most.Load(); n > m && !p.most.CompareAndSwap(m, n); m = p.most.Load() {
		}
		origin := r.Question[0].Name
		p.mu.Lock()
		p.asked[origin]++
		gate := p.gates[origin]
		p.mu.Unlock()
		if gate != nil {
			<-gate
		}
		time.Sleep(20 * time.Millisecond) // long enough for refreshes to overlap, were they let
		// No longer counted once the answer is on its way: the client's
		// next query may then arrive before this handler has returned.
		p.inFlight.Add(-1)
		soa := fmt.Sprintf("%s 300 SOA ns1.%[1]s h.%[1]s 1 3600 1 %d 300", origin, p.expire)
		zone := []string{soa, origin + " 300 NS ns1." + origin, "ns1." + origin + " 300 A 192.0.2.53", soa}
		if r.Question[0].Qtype == dns.TypeSOA {
			m := new(dns.Msg)
			m.SetReply(r)
			m.Answer = rrs(t, soa)
			w.WriteMsg(m)
			return
		}
		ch := make(chan *dns.Envelope, 1)
		ch <- &dns.Envelope{RR: rrs(t, zone...)}
		close(ch)
		new(dns.Transfer).Out(w, r, ch)
		w.Hijack()
		w.Close()
	}))
	return p
}

// hold has p hold its answers for origin until the gate it returns is
// closed.
func (p *zonesPrimary) hold(origin string) chan struct{} {
	gate := make(chan struct{})
	p.mu.Lock()
	p.gates[origin] = gate
	p.mu.Unlock()
	return gate
}

func (p *zonesPrimary) askedFor(origin string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.asked[origin]
}

// scheduled starts a primary whose zones expire after expire seconds, a
// store, and a Scheduler of workers, stopped when the test ends.
func scheduled(t *testing.T, expire, workers int) (*zonesPrimary, *zonestore.Store, *Scheduler) {
	p := startZonesPrimary(t, expire)
	q := NewScheduler(workers)
	t.Cleanup(q.Stop)
	return p, zonestore.NewStore(), q
}

// add schedules in q the zone of origin, transferred from p into store.
func (p *zonesPrimary) add(q *Scheduler, store *zonestore.Store, origin string) *Zone {
	z := New(Config{Origin: origin, Primaries: []string{p.addr}, Store: store})
	q.Add(z)
	return z
}

func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	for deadline := time.Now().Add(20 * time.Second); !f(); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// TestSchedulerBoundsRefreshes: 40 zones added at once are all
// transferred, never more than the Scheduler's 3 workers' refreshes at
// once at their primary; a NOTIFY refreshes a zone now, though its
// refresh is an hour away; a zone removed is refreshed no more.
func TestSchedulerBoundsRefreshes(t *testing.T) {
	p, store, q := scheduled(t, 600, 3)
	var zones []*Zone
	for i := range 40 {
		zones = append(zones, p.add(q, store, fmt.Sprintf("z%d.test.", i)))
	}
	waitFor(t, "every zone transferred", func() bool {
		for _, z := range zones {
			if !z.Loaded() {
				return false
			}
		}
		return true
	})
	if most := p.most.Load(); most > 3 || most < 2 {
		t.Errorf("at most %d queries at once at the primary, want 2 or 3 (the workers')", most)
	}

	before := p.askedFor("z7.test.")
	zones[7].Notify()
	waitFor(t, "the NOTIFY's SOA query", func() bool { return p.askedFor("z7.test.") > before })

	q.Remove(zones[8])
	before = p.askedFor("z8.test.")
	zones[8].Notify()
	zones[9].Notify() // a zone still scheduled, asked after z8 would have been
	waitFor(t, "z9's SOA query", func() bool { return p.askedFor("z9.test.") > 1 })
	if got := p.askedFor("z8.test."); got != before {
		t.Errorf("a removed zone refreshed: %d queries, %d before", got, before)
	}
}

// TestRefreshesOnItsTimer: a zone is refreshed again at its refresh
// interval (held to 200 ms here), on the timer its expire shares; its
// expire, far off, does not hold the refreshes back.
func TestRefreshesOnItsTimer(t *testing.T) {
	p, store, q := scheduled(t, 600, 1)
	z := New(Config{Origin: "often.test.", Primaries: []string{p.addr}, Store: store, Limits: Limits{Refresh: Bounds{Max: 200 * time.Millisecond}}})
	q.Add(z)
	waitFor(t, "often.test transferred", z.Loaded)
	before := p.askedFor("often.test.")
	time.Sleep(2 * time.Second)
	if n := p.askedFor("often.test.") - before; n < 3 { // 10 on time; 3 leave a loaded machine room
		t.Fatalf("%d queries in 2 s with a refresh of 200 ms, want 3 or more", n)
	}
}

// TestExpiryDoesNotWaitForAWorker: a zone's SOA expire passes on time
// while the only worker is held by another zone's refresh.
func TestExpiryDoesNotWaitForAWorker(t *testing.T) {
	p, store, q := scheduled(t, 1, 1)
	short := p.add(q, store, "short.test.")
	waitFor(t, "short.test transferred", short.Loaded)

	// The primary now holds every answer for slow.test; slow.test takes
	// the worker, and short.test's primary is gone.
	gate := p.hold("slow.test.")
	defer close(gate)
	short.cfg.Primaries = []string{"127.0.0.1:9"}
	p.add(q, store, "slow.test.")
	waitFor(t, "slow.test's refresh under way", func() bool { return p.askedFor("slow.test.") > 0 })
	waitFor(t, "short.test to expire (1 s)", func() bool { return store.Get("short.test.").Expired() })
	if p.inFlight.Load() != 1 { // slow.test's, held at its gate
		t.Fatalf("slow.test's refresh no longer under way (%d queries): the test proves nothing", p.inFlight.Load())
	}
}

// TestSavedCopyDoesNotWaitForAWorker: a zone with a saved copy is served
// from it as soon as it is added, though the only worker is held by
// another zone's refresh (behind primaries that do not answer, each
// refresh holds a worker for its timeout).
func TestSavedCopyDoesNotWaitForAWorker(t *testing.T) {
	p, store, q := scheduled(t, 600, 1)
	gate := p.hold("slow.test.")
	defer close(gate)
	p.add(q, store, "slow.test.")
	waitFor(t, "slow.test's refresh under way", func() bool { return p.askedFor("slow.test.") > 0 })

	// example.test's copy, as a transfer would have saved it.
	b, _ := zonestore.NewBuilder("example.test.", "")
	for _, rr := range zoneV(t, "5", "www.example.test. 300 A 192.0.2.5")[:4] {
		b.Add(rr, 0)
	}
	z, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	file := t.TempDir() + "/example.test.zone"
	if err := save(file, z); err != nil {
		t.Fatal(err)
	}
	q.Add(New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: store, File: file}))
	if got := answer(store, "www.example.test."); got != "192.0.2.5" {
		t.Fatalf("the saved copy, once added: www %s", got)
	}
}

// TestARemovedZoneJudgesNoVersion: once removed, a zone's expiry timer
// marks nothing expired, though its origin is served on (by the zone that
// took its place, a Corefile reload's, whose last good refresh is not
// this one's).
func TestARemovedZoneJudgesNoVersion(t *testing.T) {
	p, store, q := scheduled(t, 1, 1)
	old := p.add(q, store, "short.test.")
	waitFor(t, "short.test transferred", old.Loaded)
	q.Remove(old)
	old.armExpiry() // as a refresh under way when it was removed would
	time.Sleep(1500 * time.Millisecond)
	if store.Get("short.test.").Expired() {
		t.Fatal("a removed zone's expiry marked the version served expired")
	}
}

// TestARemovedZonePublishesNothing: a zone removed while its first
// transfer is under way does not publish it when it ends, nor save it:
// its origin is no zone's any more (a catalog's member dropped), or
// another's.
func TestARemovedZonePublishesNothing(t *testing.T) {
	p, store, q := scheduled(t, 600, 1)
	gate := p.hold("gone.test.")
	file := filepath.Join(t.TempDir(), "gone.test.zone")
	ev := &events{}
	z := New(Config{Origin: "gone.test.", Primaries: []string{p.addr}, Store: store, File: file, Events: ev.add})
	q.Add(z)
	waitFor(t, "gone.test's transfer under way", func() bool { return p.askedFor("gone.test.") > 0 })
	q.Remove(z)
	close(gate)
	waitFor(t, "the worker free again", func() bool { return p.inFlight.Load() == 0 && q.Queued() == 0 })
	other := p.add(q, store, "other.test.") // on the same worker, after gone.test's refresh
	waitFor(t, "other.test transferred", other.Loaded)
	if store.Get("gone.test.") != nil {
		t.Error("a removed zone's transfer, ended after, was published")
	}
	if _, err := os.Stat(file); !os.IsNotExist(err) {
		t.Errorf("a removed zone's transfer, ended after, was saved: %v", err)
	}
	if ev.String() != "" {
		t.Errorf("a removed zone reported %q", ev)
	}
}
