package zonestore

import (
	"runtime"
	"slices"
	"sync"

	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/ontimedns/ontime/replay"
)

// replaySize is how many answers a server keeps packed by default (the
// replay option sets it; 0 keeps none), whatever its cores: they share
// them (replay.Shared). An answer kept costs about 400 octets of heap, so
// a server keeps about 200 MB at most; 2^19 is room for the load test's
// 94,000 questions in sets of four with few pushed out (at 2^17, one
// query in eight missed).
const replaySize = 1 << 19

// replays are a Handler's answers kept packed, in one replay.Shared, and
// the Caches that find and keep them, one per P: sync.Pool keeps one per
// P, so a query takes its P's, whose counts and scratch no other core
// writes. The pool drops what it holds only when it was not used between
// two garbage collections; a server answering queries keeps its Caches.
//
// A goroutine preempted while it holds its P's Cache leaves the pool
// there empty, and the next query on that P is made a Cache of its own: a
// few kilobytes of scratch, which finds what the others kept. Until the
// Caches shared their answers (2026-12-05), each such Cache learnt every
// question apart: on one P under load the server kept two, and missed 2.2
// times the questions asked before both had them (205,550 misses in 20 s
// for 94,058 questions, bench/README.md).
type replays struct {
	pool sync.Pool
	// shared is made with the first Cache: its slots are 16 octets an
	// answer and its ghosts 4 (10 MB by default), and a block that never
	// answers a query that may be kept (no codel or fastpack before it)
	// needs none.
	shared func() *replay.Shared
	size   int // answers kept
}

func newReplays(size int) *replays {
	r := &replays{shared: sync.OnceValue(func() *replay.Shared { return replay.NewShared(size) }), size: size}
	r.pool.New = func() any {
		counts := allCounts.add()
		c := r.shared().Cache(counts)
		// Its counts stay in the totals once the pool has dropped it.
		runtime.AddCleanup(c, allCounts.retire, counts)
		return c
	}
	return r
}

func (r *replays) get() *replay.Cache  { return r.pool.Get().(*replay.Cache) }
func (r *replays) put(c *replay.Cache) { r.pool.Put(c) }

// allCounts are the counts of the Caches, for the metrics.
var allCounts countsOf

// countsOf holds the counts of every Cache in use, and the sum of those
// of the Caches collected, so that the totals never fall.
type countsOf struct {
	sync.Mutex
	of      []*replay.Counts
	retired replay.Counts
}

// add returns new counts, in the totals.
func (a *countsOf) add() *replay.Counts {
	c := new(replay.Counts)
	a.Lock()
	a.of = append(a.of, c)
	a.Unlock()
	return c
}

// retire folds the counts of a Cache collected into the retired sum.
func (a *countsOf) retire(c *replay.Counts) {
	a.Lock()
	defer a.Unlock()
	a.retired.Hits.Add(c.Hits.Load())
	a.retired.Misses.Add(c.Misses.Load())
	if i := slices.Index(a.of, c); i >= 0 {
		a.of = slices.Delete(a.of, i, i+1)
	}
}

// sum is the total of f over every count, retired or not.
func (a *countsOf) sum(f func(*replay.Counts) uint64) float64 {
	a.Lock()
	defer a.Unlock()
	n := f(&a.retired)
	for _, c := range a.of {
		n += f(c)
	}
	return float64(n)
}

var (
	_ = promauto.NewCounterFunc(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "replay_hits_total",
		Help:      "Queries answered with the octets packed for the same question before, from the same zone version (its name in another case where the answer holds the case only in its question, which is written as asked).",
	}, func() float64 { return allCounts.sum(func(c *replay.Counts) uint64 { return c.Hits.Load() }) })
	_ = promauto.NewCounterFunc(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "replay_misses_total",
		Help:      "Queries whose answer could be kept (one question, no EDNS option but a cookie) but was not found kept: a question asked once or twice (an answer is kept at its second miss), a new zone version, an answer pushed out, or one too long to keep.",
	}, func() float64 { return allCounts.sum(func(c *replay.Counts) uint64 { return c.Misses.Load() }) })
)
