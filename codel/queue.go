package codel

import (
	"runtime"
	"sync"
	"time"
)

// A Task is a query's remaining work.
type Task interface {
	// Run does the work, on a worker. It should not block for long: a
	// worker blocked past Config.StallAfter is replaced, up to MaxWorkers.
	Run()
	// Drop is called instead of Run when the query is dropped. It must
	// not block: it runs on the worker, or the goroutine that submitted.
	Drop(Reason)
}

// Reason says why a query was dropped.
type Reason uint8

const (
	Full        Reason = iota // the queue was full: its oldest query made room for the newest
	Late                      // CoDel: the queue's waiting time stayed above target
	Deadline                  // the query waited past the deadline (at any hop)
	Stalled                   // every worker was blocked and no more may be started
	RateLimited               // a plugin below limited the client's responses (rrl): counted here, dropped there
	TCPConns                  // a TCP connection refused: its client, or the server, held its limit of them
	Malformed                 // a datagram too short to hold a DNS header, read and let go before any queue
	numReasons
)

// Reasons lists every reason, in order, for metrics.
var Reasons = [numReasons]Reason{Full, Late, Deadline, Stalled, RateLimited, TCPConns, Malformed}

func (r Reason) String() string {
	switch r {
	case Full:
		return "full"
	case Late:
		return "codel"
	case Deadline:
		return "deadline"
	case Stalled:
		return "workers"
	case RateLimited:
		return "ratelimit"
	case TCPConns:
		return "tcp"
	case Malformed:
		return "malformed"
	}
	return "unknown"
}

// Config sets a queue's bounds. The zero value of each field means its
// default, chosen for an authoritative server whose answers take
// microseconds; README.md says why each is what it is.
type Config struct {
	Target     time.Duration // CoDel target: acceptable standing wait (default 5ms)
	Interval   time.Duration // CoDel interval: how long the wait may stay above target (default 100ms)
	Deadline   time.Duration // never serve a query older than this (default 500ms)
	Workers    int           // long-lived workers (default GOMAXPROCS)
	MaxWorkers int           // workers at most, replacements for blocked ones included (default 256, at least Workers)
	Capacity   int           // queued queries at most (default 8192)
	StallAfter time.Duration // the oldest query waited this long and workers are blocked: add some (default 2ms)
	IdleRetire time.Duration // an added worker idle this long exits (default 5s)
	FIFO       bool          // always serve the oldest first (default: newest first under sustained congestion)
	// Feed, if set, is called by each worker before it takes its next
	// query, outside the lock: a way for the caller to queue, without
	// waiting, what has arrived meanwhile (packets on a socket). turn
	// counts the worker's feeds, from a number of its own: a caller with
	// several sources reads one a call, in turn, the workers spread over
	// them, with no counter that every worker writes. next, where not
	// nil, is the Source the worker waits on next, the queue being empty:
	// its Wait looks there before it blocks, and a feed that read it too
	// would read nothing twice.
	Feed func(turn int, next Source)
	// Local, if set, makes each worker's own state (see Local), handed
	// to the LocalTasks it runs.
	Local func() Local
	// Warm, if set, is called by a worker that takes a hand for each
	// query of it and the one taken with it, warmPasses times, in passes
	// over them all, before it serves them, on the goroutine that will:
	// a way for the caller to have the CPU fetch what those queries will
	// read, each pass's fetches for all of them at once (internal/ahead).
	// It reports whether the task has more to warm: the passes stop once
	// none of them has. It must not block.
	Warm  func(t Task) (more bool)
	Clock func() int64 // monotonic nanoseconds (default Now)
}

func (c Config) withDefaults() Config {
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&c.Target, 5*time.Millisecond)
	def(&c.Interval, 100*time.Millisecond)
	def(&c.Deadline, 500*time.Millisecond)
	def(&c.StallAfter, 2*time.Millisecond)
	def(&c.IdleRetire, 5*time.Second)
	if c.Workers <= 0 {
		c.Workers = runtime.GOMAXPROCS(0)
	}
	if c.MaxWorkers <= 0 {
		c.MaxWorkers = 256
	}
	c.MaxWorkers = max(c.MaxWorkers, c.Workers)
	if c.Capacity <= 0 {
		c.Capacity = 8192
	}
	if c.Clock == nil {
		c.Clock = Now
	}
	return c
}

var epoch = time.Now()

// Now is the default clock: monotonic nanoseconds since the process started.
func Now() int64 { return int64(time.Since(epoch)) }

type entry struct {
	task    Task
	arrival int64
}

type drop struct {
	task   Task
	reason Reason
}

// Queue is one bounded queue in front of long-lived workers. Every query
// it drops, it drops in one place (next, or SubmitAll when full), counted
// by reason.
type Queue struct {
	cfg      Config
	deadline int64
	shed     int64 // while overloaded, anything older than this goes (2x target)

	mu       sync.Mutex
	ring     []entry
	head, n  int
	ctl      Controller
	over     overload
	idle     []*worker // parked, most recent last: the warmest is woken first
	workers  []*worker // running
	progress uint64    // queries taken so far
	watching bool      // the stall timer is armed
	from     uint64    // progress when it was armed
	cpuMark  int64     // the threads' run plus run-queue time (ns) when last measured
	wallMark int64     // and the clock then
	retiring int       // added workers asked to exit, the CPUs being saturated
	extras   int       // running workers added for blocked ones
	// idleNow, idleBefore: the process used less than half its CPUs in
	// the last measure, and in the one before it (cpuUsed).
	idleNow, idleBefore bool
	attendants          int // running workers started by Attend
	started             int // workers started so far, attendants too: each feeds from its place (Config.Feed)
	stall               *time.Timer
	stalled             bool // no worker may be added and none made progress
	closed              bool
	drops               [numReasons]uint64
	retired             workerStats // the counts of workers that have exited
	wg                  sync.WaitGroup
	exited              chan struct{} // closed once closed and every worker has exited
}

// New starts a queue and its workers.
func New(cfg Config) *Queue {
	realClock := cfg.Clock == nil // the CPU's times are on it
	cfg = cfg.withDefaults()
	q := &Queue{
		cfg:      cfg,
		deadline: int64(cfg.Deadline),
		shed:     2 * int64(cfg.Target),
		ring:     make([]entry, cfg.Capacity),
		ctl:      Controller{Target: int64(cfg.Target), Interval: int64(cfg.Interval)},
		over:     overload{target: int64(cfg.Target), interval: int64(cfg.Interval)},
		exited:   make(chan struct{}),
	}
	if realClock {
		q.over.cpu = processCPU
	}
	if busy, ok := processCPU(); ok {
		q.cpuMark, q.wallMark = busy, Now()
	}
	q.stall = time.AfterFunc(time.Hour, q.checkStall)
	q.stall.Stop()
	q.mu.Lock()
	for range cfg.Workers {
		q.startWorker(false)
	}
	q.mu.Unlock()
	return q
}

// Config returns the queue's settings, defaults filled in.
func (q *Queue) Config() Config { return q.cfg }

// Submit queues t, which arrived at arrival (by the queue's clock). A full
// queue drops its oldest query to make room. After Close, t runs on the
// caller's goroutine: a query that reaches a server being replaced is
// still answered.
func (q *Queue) Submit(t Task, arrival int64) {
	one := [1]Arrived{{t, arrival}}
	q.SubmitAll(one[:])
}

// Arrived is a task and when it arrived (by the queue's clock).
type Arrived struct {
	Task    Task
	Arrival int64
}

// SubmitAll does what Submit does for each of ts, in order, under one
// taking of the lock: a socket reader that read a batch hands it over with
// one write to the lock every worker takes, instead of one a query.
func (q *Queue) SubmitAll(ts []Arrived) { q.submitAll(ts, nil) }

// submitAll is SubmitAll; from, where not nil: the Source whose Wait
// queues ts, and the worker waiting there takes the first ones itself
// (SubmitAllTaking).
func (q *Queue) submitAll(ts []Arrived, from Source) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		for _, t := range ts {
			t.Task.Run()
		}
		return
	}
	if q.stalled {
		q.drops[Stalled] += uint64(len(ts))
		q.mu.Unlock()
		for _, t := range ts {
			t.Task.Drop(Stalled)
		}
		return
	}
	var room [8]Task
	evicted := room[:0] // told outside the lock
	unparked := 0       // tasks queued with no worker parked to take them
	own := 0            // the first tasks are the waiting worker's own: none is woken for them
	if from != nil {
		own = q.sourceKeeps(from)
	}
	for _, t := range ts {
		if q.n == len(q.ring) {
			evicted = append(evicted, q.popHead().task)
			q.drops[Full]++
		}
		q.ring[(q.head+q.n)%len(q.ring)] = entry{t.Task, t.Arrival}
		q.n++
		if own > 0 {
			own--
		} else if k := len(q.idle); k > 0 {
			w := q.idle[k-1]
			q.idle = q.idle[:k-1]
			w.wake <- struct{}{} // buffered: a parked worker's channel is empty
		} else {
			unparked++
			if !q.watching {
				q.armStall()
			}
		}
	}
	var nudging [4]Source
	nudges := nudging[:0]
	if unparked > 0 && q.attendants > 0 && from == nil {
		// Not where a Source's Wait queued them: the worker waiting
		// there serves them next.
		nudges = q.nudgeWaiting(unparked, nudges)
	}
	q.mu.Unlock()
	for _, s := range nudges {
		s.Nudge()
	}
	for _, t := range evicted {
		t.Drop(Full)
	}
}

func (q *Queue) popHead() entry {
	e := q.ring[q.head]
	q.ring[q.head] = entry{}
	q.head = (q.head + 1) % len(q.ring)
	q.n--
	return e
}

func (q *Queue) popTail() entry {
	i := (q.head + q.n - 1) % len(q.ring)
	e := q.ring[i]
	q.ring[i] = entry{}
	q.n--
	return e
}

// next picks the query to serve at now, dropping the late ones into
// *dropped (to be told outside the lock). Called with q.mu held.
//
// CoDel watches the head, the oldest query: its wait is the queue's
// standing delay, and the RFC 8289 law drops from the head. On top of the
// law, as folly's Codel does, the queue is overloaded from the law's first
// drop until a whole interval passes with every wait below target (see
// overload); while overloaded, every query older than twice the target is shed from
// the head, and the newest query is served first (adaptive LIFO): the
// oldest are the ones resolvers have given up on. The law alone lets the
// queue stand for an interval again each time it empties, which under
// overload is often; a burst shorter than an interval is still served in
// arrival order.
func (q *Queue) next(now int64, dropped *[]drop) (entry, int64, bool) {
	for q.n > 0 {
		h := q.ring[q.head]
		soj := now - h.arrival
		reason := numReasons
		lawDrops := q.ctl.Drop(now, soj, q.n)
		over := q.over.observe(now, soj, q.ctl.Dropping())
		switch {
		case soj > q.deadline:
			reason = Deadline
		case lawDrops:
			reason = Late
		case over && soj > q.shed:
			reason = Late
		}
		if reason != numReasons {
			q.popHead()
			q.drops[reason]++
			*dropped = append(*dropped, drop{h.task, reason})
			continue
		}
		if over && q.n > 1 && !q.cfg.FIFO {
			e := q.popTail()
			if s := now - e.arrival; s <= q.deadline {
				return e, s, true
			}
			// A continuation back from a slow step, too late to answer.
			q.drops[Deadline]++
			*dropped = append(*dropped, drop{e.task, Deadline})
			continue
		}
		q.popHead()
		return h, soj, true
	}
	q.ctl.Empty()
	q.over.observe(now, 0, false)
	return entry{}, 0, false
}

// overload says whether the queue is overloaded. It turns on when the law
// starts dropping (the head's wait stayed above target for an interval),
// and off after a whole interval in which the wait never rose above the
// target, or after two in a row in which the process used less than
// cpuBusy of its CPUs (one may be a collection's marking, or the kernel
// taking the CPU for packets, neither counted as the process's):
// while overloaded, shedding keeps the wait between the target and twice
// the target, and an instant of empty queue (a lull between two bursts of
// packets, or the moment after a shed) is not the end of the overload, as
// it is for the law. Below capacity, bursts of costly queries keep some
// wait above the target in most intervals; without the second way out,
// shedding, newest first, went on dropping up to a quarter of the queries
// at 0.8x capacity with CPU to spare (bench/README.md). How long workers
// waited for work is no such measure: on one CPU they wait while the
// reader and the collector run.
type overload struct {
	target, interval int64
	until            int64 // end of the interval being watched
	max              int64 // largest wait seen in it
	on               bool

	// cpu returns the process's CPU time, used and waited for (nil: not
	// measured, as under a test's clock); marked when an interval begins.
	cpu     func() (int64, bool)
	cpuMark int64
	spare   bool // the last interval had CPU to spare
}

// cpuBusy is the share of its CPUs a process uses when it has more work
// than they can do (the kernel's accounting and the collector leave a
// little out).
const cpuBusy = 0.9

func (o *overload) observe(now, sojourn int64, lawDropping bool) bool {
	if lawDropping && !o.on {
		o.on, o.spare = true, false
		o.begin(now, sojourn, o.measure())
	}
	if now >= o.until {
		busy := o.measure() // once a boundary: it reads /proc, under the queue's lock
		spare := o.spareIn(now, busy)
		if o.on && (o.max < o.target || spare && o.spare) {
			o.on = false
		}
		o.spare = spare
		o.begin(now, sojourn, busy)
	}
	o.max = max(o.max, sojourn)
	return o.on
}

// measure returns the process's CPU time while overloaded, 0 otherwise or
// where it is not measured.
func (o *overload) measure() int64 {
	if !o.on || o.cpu == nil {
		return 0
	}
	busy, ok := o.cpu()
	if !ok {
		return 0
	}
	return busy
}

// begin starts an interval at now, busy (from measure) its CPU mark.
func (o *overload) begin(now, sojourn, busy int64) {
	o.max, o.until, o.cpuMark = sojourn, now+o.interval, busy
}

// spareIn says whether the process used less than cpuBusy of its CPUs in
// the interval that ends at now, busy its CPU time then.
func (o *overload) spareIn(now, busy int64) bool {
	if busy == 0 || o.cpuMark == 0 {
		return false
	}
	wall := now - (o.until - o.interval)
	return float64(busy-o.cpuMark) < cpuBusy*float64(wall)*float64(runtime.GOMAXPROCS(0))
}

// armStall starts the stall timer. Called with q.mu held, when a query is
// queued and no worker is idle.
func (q *Queue) armStall() {
	q.watching = true
	q.from = q.progress
	q.stall.Reset(q.cfg.StallAfter)
}

// checkStall runs when the stall timer fires. If queries wait, no worker
// is idle and the oldest has waited StallAfter, it asks whether workers are
// blocked (in a plugin that does I/O, or sleeps) rather than computing:
// when more workers have been inside one query for StallAfter than there
// are CPUs (GOMAXPROCS), some of them cannot be running; when every worker
// has, and the process's threads ran or waited to run for less than half
// its CPUs' time in each of the last two measures (40 ms or more each),
// none of them is. Two, because a thread's wait for a CPU shows in its
// schedstat only once it runs again: one window can read a computing
// worker's CPU as a third of it, and the next as more than all of it
// (TestComputingWorkerIsNotReplaced failed three runs in twenty). Then
// more are started, one per waiting query and 32 at most a check, up to
// MaxWorkers; at the limit, if none has taken a query since the timer was
// armed, new queries are dropped (Stalled) until one does. Workers busy computing (a costly query, or
// simply more queries than the CPUs can answer) are not replaced: more of
// them would only take turns on the same CPUs, and the waits CoDel sees
// would stop being the waits queries see. When a measure finds the CPUs
// saturated (95%), one added worker retires.
func (q *Queue) checkStall() {
	q.mu.Lock()
	var held []Local
	defer func() {
		q.mu.Unlock()
		for _, l := range held {
			l.Flush()
		}
	}()
	q.watching = false
	if q.closed || q.n == 0 || len(q.idle) > 0 {
		return
	}
	now := q.cfg.Clock()
	// A worker inside one query for StallAfter (blocked, or computing a
	// costly one) may hold answers written before it: they go now, not
	// when it is done.
	for _, w := range q.workers {
		if t := w.inTask.Load(); w.local != nil && t != 0 && now-t >= int64(q.cfg.StallAfter) {
			held = append(held, w.local)
		}
	}
	used, known := q.cpuUsed()
	if known {
		q.idleBefore, q.idleNow = q.idleNow, used < 0.5
	}
	if known && used >= 0.95 {
		// One at a time: under a blocking plugin the CPUs can be
		// saturated and the sleepers still needed when they wake.
		q.retiring = min(q.extras, 1)
	}
	if now-q.ring[q.head].arrival >= int64(q.cfg.StallAfter) && q.blocked(now) {
		add := min(q.n, 32, q.cfg.MaxWorkers-len(q.workers))
		for range add {
			q.startWorker(true)
		}
		q.retiring = 0
		if add == 0 && q.progress == q.from {
			q.stalled = true
		}
	}
	q.armStall()
}

// blocked reports whether some workers are blocked rather than computing.
// Called with q.mu held.
func (q *Queue) blocked(now int64) bool {
	long, serving := 0, 0
	for _, w := range q.workers {
		if w.attendant {
			// It serves queries that only compute, one worker more
			// than the CPUs (Attend).
			continue
		}
		serving++
		if t := w.inTask.Load(); t != 0 && now-t >= int64(q.cfg.StallAfter) {
			long++
		}
	}
	if long > runtime.GOMAXPROCS(0) {
		return true
	}
	return long > 0 && long == serving && q.idleNow && q.idleBefore
}

// cpuUsed returns the share of the CPUs (GOMAXPROCS of them) that the
// process's threads used or waited for since the last measure, when that
// was at least 40 ms ago; known is false otherwise. The kernel brings a
// running thread's times up to date only at its next tick, 4 ms apart: a
// shorter window sees busy threads as idle ones. A window that began
// before an idle spell says too little: the workers it adds retire at the
// next measure that finds the CPUs saturated.
func (q *Queue) cpuUsed() (used float64, known bool) {
	now := Now()
	wall := now - q.wallMark
	if wall < int64(40*time.Millisecond) {
		return 0, false
	}
	busy, ok := processCPU()
	if !ok {
		return 0, false
	}
	used = float64(busy-q.cpuMark) / float64(wall) / float64(runtime.GOMAXPROCS(0))
	q.cpuMark, q.wallMark = busy, now
	return used, true
}

// Close stops taking new work into the queue (later Submits run in
// place), lets the workers serve or drop what is queued, and waits for
// them, at most the deadline: a worker still blocked then is left to
// finish on its own.
func (q *Queue) Close() {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	q.closed = true
	q.stall.Stop()
	for _, w := range q.idle {
		w.wake <- struct{}{}
	}
	q.idle = nil
	waiting := q.interruptWaits()
	q.mu.Unlock()
	for _, s := range waiting {
		s.Interrupt()
	}
	go func() { q.wg.Wait(); close(q.exited) }()
	select {
	case <-q.exited:
	case <-time.After(q.cfg.Deadline):
	}
}

// Exited is closed once the queue is closed and every worker has exited:
// from then on its counts are final. A worker Close left behind (still
// serving, or dropping what waited) counts on until then.
func (q *Queue) Exited() <-chan struct{} { return q.exited }
