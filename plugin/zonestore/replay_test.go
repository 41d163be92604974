package zonestore

import (
	"runtime"
	"slices"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/replay"
)

// A query on a P whose Cache another goroutine holds (preempted while it
// answers) gets a Cache of its own, which finds what the other kept: the
// answers are the server's, not a Cache's.
func TestACacheMadeBesideAnotherFindsWhatItKept(t *testing.T) {
	r := newReplays(16)
	held := r.get()
	other := r.get() // the pool is empty: a Cache made for this one
	if other == held {
		t.Fatal("one Cache got twice")
	}
	q := new(dns.Msg)
	q.SetQuestion("www.example.org.", dns.TypeA)
	held.Find(q, false, 7, 1)
	held.Find(q, false, 7, 1) // kept at its second miss (replay/admit.go)
	held.Keep(1, replay.Answer{Wire: append(held.Room(), make([]byte, 40)...)})
	if other.Find(q, false, 7, 1) == nil {
		t.Fatal("a Cache does not find the answer another kept")
	}
	r.put(held)
	r.put(other)
}

// A Cache the pool drops (unused between two collections) leaves its
// counts in the totals: the metrics are counters, and never fall.
func TestADroppedCacheKeepsItsCounts(t *testing.T) {
	r := newReplays(16)
	before := allCounts.sum(func(c *replay.Counts) uint64 { return c.Misses.Load() })
	c := r.get()
	q := new(dns.Msg)
	q.SetQuestion("www.example.org.", dns.TypeA)
	if c.Find(q, false, 7, 1) != nil {
		t.Fatal("found in an empty cache")
	}
	allCounts.Lock()
	counts := allCounts.of[len(allCounts.of)-1] // c's, made last
	allCounts.Unlock()
	r.put(c)
	c = nil
	for end := time.Now().Add(10 * time.Second); ; {
		allCounts.Lock()
		in := slices.Contains(allCounts.of, counts)
		allCounts.Unlock()
		if !in {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the counts of a Cache the pool dropped are still among those in use after 10 s")
		}
		runtime.GC() // two collections drop what the pool was not asked for
		time.Sleep(time.Millisecond)
	}
	if after := allCounts.sum(func(c *replay.Counts) uint64 { return c.Misses.Load() }); after != before+1 {
		t.Fatalf("misses %v once the Cache was dropped, want %v", after, before+1)
	}
}
