package codel

import (
	"runtime"
	"slices"
	"sync/atomic"
	"time"
)

// Local is a worker's own state, handed to the tasks it runs that want it
// (LocalTask): work they leave to be done together, such as answers sent
// in one system call. The worker flushes it when it finds the queue empty,
// before it waits, and before it exits: work is held back only while
// there are queued tasks to run, and never while the worker has nothing
// else to do. A task that may block (a plugin doing I/O) flushes it itself
// before it runs, so that nothing waits behind it; the queue's stall check
// also flushes the Local of a worker that has been inside one task for
// StallAfter, from its own goroutine: Flush must allow that.
type Local interface{ Flush() }

// LocalTask is a Task that uses the state of the worker that runs it.
// Only that worker touches the state, and only while RunLocal runs. taken
// is when the worker took the task off the queue, by the queue's clock:
// read once there, for the sojourn, and not again by each task.
type LocalTask interface {
	Task
	RunLocal(l Local, taken int64)
}

// worker is a long-lived goroutine serving the queue. It keeps its grown
// stack from one query to the next, which a goroutine per query cannot.
type worker struct {
	q     *Queue
	local Local // nil unless Config.Local is set
	// emptied: the worker took the last queued query, so it feeds before
	// the next, once its hand is served. With more queued, or a hand left
	// to serve, it feeds every feedEvery: a system call a query that
	// mostly found the socket empty was a fifth of the core (and feeding
	// before each query while fewer than 8 were queued, half the system
	// calls of a server that keeps up with its load, each finding a packet
	// or two), and a query left in the socket for feedEvery is unseen for
	// far less than CoDel's target.
	emptied   bool
	took, fed int64 // when it last took a query, and last fed (queue clock)
	ran       int64 // when it last came back to run: woken, back from its source, or yielded
	feeds     int   // its feeds so far, from its place among the workers started (Config.Feed's turn)
	// hand holds queries taken off the queue with the last one, under the
	// same taking of the lock, to be served next (hand.go); served is
	// how many of them were.
	hand    []entry
	served  int
	service int64 // the time a query took the worker lately (timeService), 0 before one was timed
	// serviceSeen is service for other workers to read (sourceKeeps): the
	// worker writes service outside the lock, serving its hand.
	serviceSeen atomic.Int64
	wake        chan struct{}
	extra       bool // added for a blocked one: retires when idle for long
	// attend is an attendant's source (attend.go), where it waits instead
	// of parking; nil for the rest, and once the source is closed. stand
	// is a source an attendant busy with a long query left this worker to
	// wait on, once; waitingOn, the source it is waiting on now, nudged
	// once a task queued meanwhile nudged it. All four guarded by q.mu.
	attend    Source
	stand     Source
	waitingOn Source
	nudged    bool
	waited    bool         // its last wait on its source lasted past handHold: no feed before the next one (serve)
	waits     int64        // how long its waits on its source lasted lately, an eighth of the way to each (sourceKeeps); guarded by q.mu
	attendant bool         // started by Attend
	inTask    atomic.Int64 // when the query it runs was taken (queue clock), 0 between queries
	dropped   []drop
	stats     workerStats
}

// addWorker makes a worker, with its Local and its place among the
// workers started (its first feed's turn), and counts it running. Called
// with q.mu held.
func (q *Queue) addWorker() *worker {
	w := &worker{q: q, wake: make(chan struct{}, 1), emptied: true, feeds: q.started}
	q.started++
	if q.cfg.Local != nil {
		w.local = q.cfg.Local()
	}
	q.workers = append(q.workers, w)
	q.wg.Add(1)
	return w
}

// startWorker is called with q.mu held.
func (q *Queue) startWorker(extra bool) {
	w := q.addWorker()
	w.extra = extra
	if extra {
		q.extras++
	}
	go w.loop()
}

func (w *worker) loop() {
	defer w.q.wg.Done()
	w.serve()
}

// serve serves the queue until the worker exits.
func (w *worker) serve() {
	feed := w.q.cfg.Feed
	w.ran = w.q.cfg.Clock()
	for {
		fed := false
		emptied := w.emptied && w.served == len(w.hand)
		if feed != nil && (emptied && !w.waited || w.took-w.fed >= feedEvery) {
			w.feed(feed, emptied)
			w.fed, fed = w.took, true
		} else if emptied && w.waited {
			// It served what its wait on its source read; what arrived
			// since, its next wait reads first (a Source's Wait looks
			// before it blocks: RawConn.Read tries its function first).
			// A feed now as well was a read that found nothing, for each
			// query at a light load: 1.6 µs here (bench/README.md).
			fed = true
		}
		if emptied {
			w.waited = false
		}
		e, sojourn, ok := w.take(fed)
		w.tellDropped()
		if !ok {
			if w.local != nil {
				w.local.Flush()
			}
			return
		}
		w.stats.observe(sojourn)
		if w.served == 0 { // e was taken off the queue, with a new hand
			w.warm(e.task)
		}
		w.inTask.Store(max(w.took, 1)) // when it was taken
		w.run(e.task, w.took)
		w.inTask.Store(0)
		if w.took-w.ran >= yieldAfter {
			w.yield()
		}
	}
}

// yieldAfter is how long a worker runs before it lets the others of its P
// run, between two queries. The runtime preempts a goroutine that ran 10
// ms wherever it is: inside a query, holding what the query holds. One
// preempted in zonestore's handler held its P's replay Cache, and the
// next query on that P was made another (plugin/zonestore/replay.go);
// capped at one a P, 5% of the queries saturated on one CPU did without
// (bench/README.md).
const yieldAfter = int64(2 * time.Millisecond)

// yield lets the other goroutines of the worker's P run. What its Local
// holds back waits meanwhile, as it did while the worker was preempted.
func (w *worker) yield() {
	runtime.Gosched()
	w.ran = w.q.cfg.Clock()
}

// feedEvery is how often a worker feeds while queries stay queued.
const feedEvery = int64(200 * time.Microsecond)

// feed calls Config.Feed with the worker's turn, and, where the queue is
// empty, the source it would wait on next (its own, or the one it stands
// in for), which its wait reads first: at 20,000 q/s on one CPU, the
// attendant read its socket twice before each wait, the feed and the
// wait's first look finding nothing one after the other (bench/README.md).
// Fields only the worker itself writes, or wrote before it was woken:
// read without q.mu.
func (w *worker) feed(feed func(turn int, next Source), empty bool) {
	var next Source
	if empty {
		if next = w.attend; next == nil {
			next = w.stand
		}
	}
	feed(w.feeds, next)
	w.feeds++
}

// run runs t; a panic is counted and the worker goes on.
func (w *worker) run(t Task, taken int64) {
	defer func() {
		if recover() != nil {
			w.stats.panics.Add(1)
		}
	}()
	if lt, ok := t.(LocalTask); ok && w.local != nil {
		lt.RunLocal(w.local, taken)
		return
	}
	t.Run()
}

// take returns the next query to serve, parking (or waiting on its
// source, attend.go) while there is none. It returns false when the worker
// should exit: the queue is closed and empty, or the worker is an extra one
// that stayed idle too long. fed: the worker fed just before, so that a
// queue found empty is not fed again after the flush (a system call that
// finds nothing; what arrives while the worker parks wakes the reader, or
// the attendant).
func (w *worker) take(fed bool) (entry, int64, bool) {
	if e, sojourn, ok := w.fromHand(); ok {
		return e, sojourn, true
	}
	q := w.q
	q.mu.Lock()
	if w.extra && q.retiring > 0 {
		q.retiring--
		q.exit(w)
		q.mu.Unlock()
		return entry{}, 0, false
	}
	flushed := w.local == nil
	for {
		now := q.cfg.Clock()
		if e, sojourn, ok := q.next(now, &w.dropped); ok {
			w.timeService(now)
			w.fillHand(e.task, now)
			w.standIn()
			q.progress += uint64(1 + len(w.hand))
			q.stalled = false
			w.emptied = q.n == 0
			w.took = now
			q.mu.Unlock()
			return e, sojourn, true
		}
		if !flushed {
			// Nothing to do: what the worker held back goes now, and
			// what arrived meanwhile is looked for once more.
			flushed = true
			q.mu.Unlock()
			w.local.Flush()
			if feed := q.cfg.Feed; feed != nil && !fed {
				w.feed(feed, true)
			}
			q.mu.Lock()
			continue
		}
		if q.closed {
			q.exit(w)
			q.mu.Unlock()
			return entry{}, 0, false
		}
		w.took = 0 // the time it waits is no query's service
		if w.waitOnSource() {
			// The wait's read is the worker's feed. A wait that lasted
			// past handHold says queries arrive sparsely: what arrives
			// while it serves what it read is little, and its next wait
			// reads that first (serve).
			w.fed = q.cfg.Clock()
			w.ran = w.fed
			waited := w.fed - now
			w.waited = waited >= handHold
			w.waits += (waited - w.waits) / 8
			continue
		}
		q.idle = append(q.idle, w)
		q.mu.Unlock()
		w.tellDropped()
		woken := w.park()
		w.ran = q.cfg.Clock()
		q.mu.Lock()
		if !woken {
			if i := slices.Index(q.idle, w); i >= 0 {
				q.idle = slices.Delete(q.idle, i, i+1)
				q.exit(w)
				q.mu.Unlock()
				return entry{}, 0, false
			}
			// Submit took it off the idle list as the timer fired: the
			// wake-up was sent under the lock we now hold.
			<-w.wake
		}
	}
}

// park waits to be woken; an extra worker gives up after IdleRetire.
func (w *worker) park() bool {
	if !w.extra {
		<-w.wake
		return true
	}
	t := time.NewTimer(w.q.cfg.IdleRetire)
	defer t.Stop()
	select {
	case <-w.wake:
		return true
	case <-t.C:
		return false
	}
}

// exit removes w from the running workers, keeping its counts. Called with
// q.mu held.
func (q *Queue) exit(w *worker) {
	if i := slices.Index(q.workers, w); i >= 0 {
		q.workers = slices.Delete(q.workers, i, i+1)
	}
	if w.extra {
		q.extras--
	}
	if w.attendant {
		q.attendants--
	}
	q.retired.add(&w.stats)
}

// tellDropped tells the dropped tasks, outside the queue's lock.
func (w *worker) tellDropped() {
	for i, d := range w.dropped {
		d.task.Drop(d.reason)
		w.dropped[i] = drop{}
	}
	w.dropped = w.dropped[:0]
}
