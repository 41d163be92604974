package secondary

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// TestUnreachableHolds: a primary is held after its second miss in a row,
// for holdMin, then twice as long at each miss after a hold, up to
// holdMax; misses while held change nothing; an answer, or a NOTIFY from
// its address, lets it go.
func TestUnreachableHolds(t *testing.T) {
	now := time.Unix(1_000_000, 0)
	u := &unreachable{now: func() time.Time { return now }}
	const p = "127.0.0.1:5300"
	heldFor := func() time.Duration {
		until, held := u.held(p)
		if !held {
			return 0
		}
		return until.Sub(now)
	}
	if hold := u.missed(p); hold != 0 {
		t.Fatalf("a first miss says a hold of %v", hold)
	}
	if d := heldFor(); d != 0 {
		t.Fatalf("held %v after one miss", d)
	}
	if hold := u.missed(p); hold != holdMin {
		t.Fatalf("a second miss says a hold of %v, want %v", hold, holdMin)
	}
	if d := heldFor(); d != holdMin {
		t.Fatalf("held %v after two misses, want %v", d, holdMin)
	}
	now = now.Add(time.Second)
	u.missed(p) // a query sent before the hold
	if d := heldFor(); d != holdMin-time.Second {
		t.Fatalf("a miss while held changed the hold: %v left, want %v", d, holdMin-time.Second)
	}
	want := holdMin
	for range 8 {
		now = now.Add(holdMax) // the hold lapses; its probe gets no answer
		if d := heldFor(); d != 0 {
			t.Fatalf("still held %v after its hold", d)
		}
		u.missed(p)
		want = min(2*want, holdMax)
		if d := heldFor(); d != want {
			t.Fatalf("held %v after a failed probe, want %v", d, want)
		}
	}
	if !u.answered(p) {
		t.Fatal("an answer after a hold does not say so")
	}
	u.missed(p)
	if d := heldFor(); d != 0 {
		t.Fatalf("held %v after an answer and one miss", d)
	}
	u.missed(p)
	if d := heldFor(); d != holdMin {
		t.Fatalf("held %v after an answer and two misses, want %v afresh", d, holdMin)
	}

	other := "127.0.0.2:5300"
	for _, a := range []string{"127.0.0.1:53", other} {
		u.missed(a)
		u.missed(a)
	}
	u.heardFrom(net.ParseIP("127.0.0.1"))
	for _, a := range []string{p, "127.0.0.1:53"} {
		if _, held := u.held(a); held {
			t.Errorf("%s held after a NOTIFY from its address", a)
		}
	}
	if _, held := u.held(other); !held {
		t.Errorf("%s let go by a NOTIFY from another address", other)
	}
	if _, held := (*unreachable)(nil).held(p); held {
		t.Error("a zone not scheduled holds a primary")
	}
}

// deadPrimary takes queries on 127.0.0.1, over UDP and TCP, and never
// answers them, counting them.
type deadPrimary struct {
	addr  string
	asked atomic.Int32
}

func startDeadPrimary(t *testing.T) *deadPrimary {
	t.Helper()
	d := &deadPrimary{}
	d.addr = serve(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		d.asked.Add(1)
	}))
	return d
}

// TestDeadPrimaryDoesNotHoldTheWorkers: 30 zones of a primary that takes
// queries and never answers, on 2 workers, each query timing out after
// 300 ms. Only the first few queries reach it: then it is held, and the
// other zones' refreshes fail at once, where each would have held a
// worker for its timeout. A zone of a live primary added behind them is
// transferred. A NOTIFY from the dead primary's address lets it go.
func TestDeadPrimaryDoesNotHoldTheWorkers(t *testing.T) {
	dead := startDeadPrimary(t)
	live, store, q := scheduled(t, 600, 2)
	var mu sync.Mutex
	failed := map[string]string{}
	var logged []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	var zones []*Zone
	for i := range 30 {
		origin := fmt.Sprintf("d%d.test.", i)
		z := New(Config{Origin: origin, Primaries: []string{dead.addr}, Store: store, Timeout: 300 * time.Millisecond, Logf: logf,
			Events: func(_, kind string, _ *zonestore.Zone, err error) {
				if err != nil {
					mu.Lock()
					failed[origin] = err.Error()
					mu.Unlock()
				}
			}})
		zones = append(zones, z)
		q.Add(z)
	}
	alive := live.add(q, store, "alive.test.")
	waitFor(t, "every dead zone's first refresh to fail", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(failed) == len(zones)
	})
	t.Logf("the dead primary asked %d times", dead.asked.Load())
	if n := dead.asked.Load(); n > 4 {
		t.Errorf("the dead primary was asked %d times for 30 zones on 2 workers, want at most 4 before it is held", n)
	}
	mu.Lock()
	why, lines := failed["d29.test."], strings.Join(logged, "\n")
	mu.Unlock()
	if !strings.Contains(why, "not asked") {
		t.Errorf("the last zone's refresh failed with %q, want it not asked", why)
	}
	if strings.Count(lines, "did not answer twice in a row") != 1 || !strings.Contains(lines, "not asked for 10s") {
		t.Errorf("logged:\n%s\nwant the hold once", lines)
	}
	waitFor(t, "the live zone transferred", alive.Loaded)

	if _, held := q.unreach.held(dead.addr); !held {
		t.Fatal("the dead primary is not held")
	}
	if got := q.Unreachable(); len(got) != 1 || got[0] != dead.addr {
		t.Fatalf("Unreachable: %v, want the dead primary alone", got)
	}
	before := dead.asked.Load()
	zones[0].NotifyFrom(net.ParseIP("127.0.0.1"))
	if _, held := q.unreach.held(dead.addr); held || len(q.Unreachable()) != 0 {
		t.Fatal("the dead primary still held after a NOTIFY from its address")
	}
	waitFor(t, "the notified zone to ask its primary", func() bool { return dead.asked.Load() > before })
}

// TestNoAXFRAfterAnIXFRUnanswered: a primary that answers the SOA query
// and then not the IXFR is not asked for an AXFR too, which would hold
// the worker for a second timeout.
func TestNoAXFRAfterAnIXFRUnanswered(t *testing.T) {
	var axfrs atomic.Int32
	addr := serve(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		switch r.Question[0].Qtype {
		case dns.TypeSOA:
			m := new(dns.Msg)
			m.SetReply(r)
			m.Answer = rrs(t, soa("2"))
			w.WriteMsg(m)
		case dns.TypeAXFR:
			axfrs.Add(1)
		}
	}))
	store := zonestore.NewStore()
	z := New(Config{Origin: "example.test.", Primaries: []string{addr}, Store: store, Timeout: 300 * time.Millisecond})
	if err := z.publishWhole(zoneV(t, "1"), nil, expireOption{}); err != nil {
		t.Fatal(err)
	}
	err := z.Refresh()
	if err == nil || !strings.Contains(err.Error(), "IXFR") || !noAnswer(err) {
		t.Fatalf("refresh: %v, want the IXFR's timeout", err)
	}
	if n := axfrs.Load(); n != 0 {
		t.Errorf("asked for %d AXFRs after the IXFR got no answer", n)
	}
}
