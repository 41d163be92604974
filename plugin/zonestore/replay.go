package zonestore

import (
	"runtime"
	"sync"
	"sync/atomic"

	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/ontimedns/ontime/replay"
)

// replaySize is how many answers each P keeps packed by default (the
// replay option sets it; 0 keeps none): 2^19 among all Ps, at least 2^14
// and at most 2^18 each, read when a Corefile is set up (GOMAXPROCS is
// set by then). An answer kept costs about 400 octets of heap,
// so a server keeps about 200 MB at most, however many cores it has; one
// or two Ps keep 2^18 each, room for the load test's 94,000 questions
// in sets of four with few pushed out (at 2^17, one query in eight
// missed).
func replaySize() int { return min(max(1<<19/runtime.GOMAXPROCS(0), 1<<14), 1<<18) }

// replays are a Handler's caches of packed answers, one per P: sync.Pool
// keeps one per P, so a query takes its P's without writing memory that
// other cores share. The pool drops what it holds only when it was not
// used between two garbage collections; a server answering queries keeps
// its caches.
//
// There are as many caches as Ps, no more (made counts them). A goroutine
// preempted while it holds its P's cache leaves the pool there empty, and
// a pool's New would make the next query on that P a cache of its own:
// on one P under load the server kept two, each learning every question
// apart, and missed 2.2 times the questions asked before both had them
// (205,550 misses in 20 s for 94,058 questions, bench/README.md). A query
// that finds no cache while there are as many as Ps does without: it is
// answered as any, and neither kept nor counted.
type replays struct {
	pool sync.Pool
	size int          // answers each cache keeps
	made atomic.Int64 // caches not yet collected
}

func newReplays(size int) *replays {
	return &replays{size: size}
}

// get returns a cache of the caller's P, or nil where every cache there
// may be is held.
func (r *replays) get() *replay.Cache {
	if c, ok := r.pool.Get().(*replay.Cache); ok {
		return c
	}
	for {
		n := r.made.Load()
		if n >= int64(runtime.GOMAXPROCS(0)) {
			return nil
		}
		if r.made.CompareAndSwap(n, n+1) {
			break
		}
	}
	counts := new(replay.Counts)
	allCounts.Lock()
	allCounts.of = append(allCounts.of, counts)
	allCounts.Unlock()
	c := replay.New(r.size, counts)
	// The pool drops a cache left unused between two collections (a P
	// fewer, a quiet server): another may then be made in its place.
	runtime.AddCleanup(c, func(made *atomic.Int64) { made.Add(-1) }, &r.made)
	return c
}

func (r *replays) put(c *replay.Cache) {
	if c != nil {
		r.pool.Put(c)
	}
}

// allCounts are the counts of every cache made, for the metrics: a few
// octets each, kept after their cache is gone so the totals never fall.
var allCounts struct {
	sync.Mutex
	of []*replay.Counts
}

func sumCounts(f func(*replay.Counts) uint64) float64 {
	allCounts.Lock()
	defer allCounts.Unlock()
	var n uint64
	for _, c := range allCounts.of {
		n += f(c)
	}
	return float64(n)
}

var (
	_ = promauto.NewCounterFunc(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "replay_hits_total",
		Help:      "Queries answered with the octets packed for the same question before, from the same zone version.",
	}, func() float64 { return sumCounts(func(c *replay.Counts) uint64 { return c.Hits.Load() }) })
	_ = promauto.NewCounterFunc(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "replay_misses_total",
		Help:      "Queries whose answer could be kept (one question, no EDNS option) but was not found kept: a first question, a new zone version, an answer pushed out, or one too long to keep.",
	}, func() float64 { return sumCounts(func(c *replay.Counts) uint64 { return c.Misses.Load() }) })
)
