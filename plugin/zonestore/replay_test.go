package zonestore

import (
	"runtime"
	"testing"
	"time"

	"github.com/ontimedns/ontime/internal/raceflag"
	"github.com/ontimedns/ontime/replay"
)

// A goroutine that holds its P's cache (preempted while it answers) makes
// the next query on that P do without one, not a cache of its own: there
// are as many as Ps, each learning every question.
func TestReplayCachesAreAsManyAsPs(t *testing.T) {
	for _, procs := range []int{1, 2} {
		defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
		r := newReplays(16)
		var held []*replay.Cache
		for range procs {
			c := r.get()
			if c == nil {
				t.Fatalf("GOMAXPROCS=%d: no cache made for the %d-th holder", procs, len(held)+1)
			}
			held = append(held, c)
		}
		if c := r.get(); c != nil {
			t.Fatalf("GOMAXPROCS=%d: a cache made while %d are held, want none", procs, procs)
		}
		if got := r.made.Load(); got != int64(procs) {
			t.Fatalf("GOMAXPROCS=%d: %d caches made, want %d", procs, got, procs)
		}
		r.put(nil) // a query that did without puts nothing back
		for _, c := range held {
			r.put(c)
		}
		if raceflag.Enabled {
			continue // the detector's pool drops a quarter of what is put
		}
		if c := r.get(); c != held[0] && c != held[len(held)-1] {
			t.Fatalf("GOMAXPROCS=%d: got %p once they were put back, want one of those made", procs, c)
		}
	}
}

// A cache the pool drops (unused between two collections) is counted
// gone, so that one is made again in its place.
func TestAReplayCacheDroppedIsMadeAgain(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	r := newReplays(16)
	c := r.get()
	if c == nil {
		t.Fatal("no cache made")
	}
	r.put(c)
	c = nil
	if r.made.Load() != 1 {
		t.Fatalf("%d caches made, want 1", r.made.Load())
	}
	for end := time.Now().Add(10 * time.Second); r.made.Load() != 0; {
		if time.Now().After(end) {
			t.Fatal("a cache the pool dropped is still counted after 10 s")
		}
		runtime.GC() // two collections drop what the pool was not asked for
		time.Sleep(time.Millisecond)
	}
	if c = r.get(); c == nil {
		t.Fatal("no cache made in place of the one dropped")
	}
}
