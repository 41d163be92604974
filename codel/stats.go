package codel

import (
	"sync/atomic"
	"time"
)

// SojournBounds are the upper bounds, in seconds, of the sojourn-time
// histogram's buckets: from a tenth of a millisecond (a query that did not
// wait) to the default deadline and past it.
var SojournBounds = [...]float64{0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1}

var boundsNs = func() (b [len(SojournBounds)]int64) {
	for i, s := range SojournBounds {
		b[i] = int64(s * float64(time.Second))
	}
	return b
}()

// workerStats are one worker's counts. Only that worker writes them, so
// the cache lines they sit on are not fought over; a scrape sums them.
type workerStats struct {
	buckets [len(SojournBounds) + 1]atomic.Uint64 // the last is +Inf
	sum     atomic.Int64                          // nanoseconds
	panics  atomic.Uint64
	late    atomic.Uint64 // queries in its hand dropped for the deadline
	_       [64]byte      // keep the next worker's counts off this one's lines
}

func (s *workerStats) observe(sojourn int64) {
	i := 0
	for i < len(boundsNs) && sojourn > boundsNs[i] {
		i++
	}
	s.buckets[i].Add(1)
	s.sum.Add(sojourn)
}

func (s *workerStats) add(o *workerStats) {
	for i := range s.buckets {
		s.buckets[i].Add(o.buckets[i].Load())
	}
	s.sum.Add(o.sum.Load())
	s.panics.Add(o.panics.Load())
	s.late.Add(o.late.Load())
}

// Stats is a snapshot of a queue.
type Stats struct {
	Drops    [numReasons]uint64 // by Reason
	Queued   int                // queries waiting now
	Workers  int                // workers running now
	Dropping bool               // CoDel's law is in its dropping state
	Overload bool               // the last interval's waits stayed above target
	Served   uint64             // queries taken by a worker
	// Sojourn counts the served queries' waits by bucket (SojournBounds,
	// then +Inf), not cumulative; SojournSum is their sum in seconds.
	Sojourn    [len(SojournBounds) + 1]uint64
	SojournSum float64
	Panics     uint64 // tasks whose Run panicked, and Warms that did (the worker went on)
}

// Add adds o's counts to s, as for queues that serve one listener; a
// state (Dropping, Overload) holds if it holds for either.
func (s *Stats) Add(o Stats) {
	for i := range s.Drops {
		s.Drops[i] += o.Drops[i]
	}
	for i := range s.Sojourn {
		s.Sojourn[i] += o.Sojourn[i]
	}
	s.Queued += o.Queued
	s.Workers += o.Workers
	s.Dropping = s.Dropping || o.Dropping
	s.Overload = s.Overload || o.Overload
	s.Served += o.Served
	s.SojournSum += o.SojournSum
	s.Panics += o.Panics
}

// Stats returns the queue's counts now.
func (q *Queue) Stats() Stats {
	var total workerStats
	q.mu.Lock()
	st := Stats{Drops: q.drops, Queued: q.n, Workers: len(q.workers), Dropping: q.ctl.Dropping(), Overload: q.over.on}
	total.add(&q.retired)
	for _, w := range q.workers {
		total.add(&w.stats)
	}
	q.mu.Unlock()
	for i := range total.buckets {
		st.Sojourn[i] = total.buckets[i].Load()
		st.Served += st.Sojourn[i]
	}
	st.SojournSum = float64(total.sum.Load()) / float64(time.Second)
	st.Panics = total.panics.Load()
	st.Drops[Deadline] += total.late.Load()
	return st
}
