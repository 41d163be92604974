package codel

import (
	"fmt"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeClock is a clock the test moves by hand.
type fakeClock struct{ t atomic.Int64 }

func (c *fakeClock) now() int64      { return c.t.Load() }
func (c *fakeClock) set(d int64)     { c.t.Store(d) }
func newFake(start int64) *fakeClock { c := &fakeClock{}; c.set(start); return c }
func waitFor(t *testing.T, what string, f func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !f() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// task records what happened to it.
type task struct {
	name    string
	log     *events
	block   chan struct{} // Run waits on it, if set
	started chan struct{} // closed when Run starts, if set
	panics  bool
	clock   *fakeClock // advanced by advance when Run ends, if set
	advance int64
}

type events struct {
	mu   sync.Mutex
	runs []string
	drop map[string]Reason
}

func newEvents() *events { return &events{drop: map[string]Reason{}} }

func (e *events) ran() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.runs...)
}

func (e *events) dropped(name string) (Reason, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.drop[name]
	return r, ok
}

func (t *task) Run() {
	if t.started != nil {
		close(t.started)
	}
	if t.block != nil {
		<-t.block
	}
	if t.panics {
		panic("task " + t.name)
	}
	t.log.mu.Lock()
	t.log.runs = append(t.log.runs, t.name)
	t.log.mu.Unlock()
	if t.clock != nil {
		t.clock.set(t.clock.now() + t.advance)
	}
}

func (t *task) Drop(r Reason) {
	t.log.mu.Lock()
	t.log.drop[t.name] = r
	t.log.mu.Unlock()
}

// blockWorker occupies the queue's only worker until the returned func is called.
func blockWorker(t *testing.T, q *Queue, log *events, arrival int64) func() {
	b := &task{name: "blocker", log: log, block: make(chan struct{}), started: make(chan struct{})}
	q.Submit(b, arrival)
	<-b.started
	return func() { close(b.block) }
}

func TestServesInArrivalOrderWhenNotCongested(t *testing.T) {
	clock := newFake(1)
	q := New(Config{Workers: 1, Clock: clock.now})
	defer q.Close()
	log := newEvents()
	release := blockWorker(t, q, log, 1)
	for _, n := range []string{"a", "b", "c"} {
		q.Submit(&task{name: n, log: log}, 1)
	}
	clock.set(2 * ms) // below target
	release()
	waitFor(t, "all served", func() bool { return len(log.ran()) == 4 })
	if got := log.ran(); got[1] != "a" || got[2] != "b" || got[3] != "c" {
		t.Fatalf("served %v, want blocker a b c", got)
	}
}

// TestNewestFirstUnderSustainedCongestion: a burst shorter than the
// interval is served in arrival order; once the oldest query has waited
// above target for a whole interval (CoDel dropping), the newest is served
// first (adaptive LIFO).
func TestNewestFirstUnderSustainedCongestion(t *testing.T) {
	clock := newFake(1)
	q := New(Config{Workers: 1, Clock: clock.now})
	defer q.Close()
	log := newEvents()
	release := blockWorker(t, q, log, 1)
	for i, n := range []string{"old", "middle", "new"} {
		q.Submit(&task{name: n, log: log}, 1+int64(i)*ms)
	}
	clock.set(8 * ms) // above target, but not for an interval yet
	release()
	waitFor(t, "the burst served", func() bool { return len(log.ran()) == 4 })
	if got := log.ran(); got[1] != "old" || got[3] != "new" {
		t.Fatalf("served %v; a short burst goes in arrival order", got)
	}

	// Overload: each query takes 1 ms of the clock and two more arrive
	// meanwhile. After an interval above target the law drops, and from
	// then on nothing older than twice the target is served, and the
	// newest are served first: their waits are near zero, where serving
	// the oldest first would serve waits between the target and twice it.
	for _, fifo := range []bool{false, true} {
		longest, median, drops := overloadRun(t, fifo)
		if drops == 0 {
			t.Fatalf("fifo=%v: no CoDel drop under a 2x overload", fifo)
		}
		if longest > 2*target+ms {
			t.Fatalf("fifo=%v: once overloaded, a query was served after waiting %v", fifo, time.Duration(longest))
		}
		if !fifo && median > ms {
			t.Fatalf("newest first: median wait %v once overloaded, want about 0", time.Duration(median))
		}
		if fifo && median < target {
			t.Fatalf("oldest first: median wait %v once overloaded, want above the target", time.Duration(median))
		}
	}
}

// overloadRun runs 400 ms of a 2x overload and returns, for the queries
// served after the first 200 ms, the longest and the median wait, and the
// CoDel drops.
func overloadRun(t *testing.T, fifo bool) (longest, median int64, drops uint64) {
	clock := newFake(1)
	q := New(Config{Workers: 1, Clock: clock.now, FIFO: fifo})
	defer q.Close()
	src := &source{q: q, clock: clock, until: 400 * ms}
	release := blockWorker(t, q, newEvents(), 1)
	src.arrive(1)
	release()
	waitFor(t, "the overload to pass", func() bool { return src.done() && q.Stats().Queued == 0 })
	var waits []int64
	src.mu.Lock()
	for _, x := range src.log {
		if x.at >= 200*ms {
			waits = append(waits, x.sojourn)
		}
	}
	src.mu.Unlock()
	slices.Sort(waits)
	return waits[len(waits)-1], waits[len(waits)/2], q.Stats().Drops[Late]
}

// source is an overload on a fake clock: each query served takes 1 ms and
// brings two new ones, until the clock reaches until.
type source struct {
	q     *Queue
	clock *fakeClock
	until int64
	mu    sync.Mutex
	seq   int
	log   []served
}

type served struct {
	seq         int
	at, sojourn int64
}

type arrival struct {
	s       *source
	seq     int
	arrival int64
}

func (s *source) arrive(now int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for range 2 {
		if now < s.until {
			s.seq++
			s.q.Submit(&arrival{s, s.seq, now}, now)
		}
	}
}

func (s *source) done() bool { return s.clock.now() >= s.until }

func (a *arrival) Run() {
	now := a.s.clock.now()
	a.s.mu.Lock()
	a.s.log = append(a.s.log, served{a.seq, now, now - a.arrival})
	a.s.mu.Unlock()
	a.s.clock.set(now + ms)
	a.s.arrive(now + ms)
}

func (a *arrival) Drop(Reason) {}

func TestFIFOServesTheOldestEvenWhenCongested(t *testing.T) {
	clock := newFake(1)
	q := New(Config{Workers: 1, Clock: clock.now, FIFO: true})
	defer q.Close()
	log := newEvents()
	release := blockWorker(t, q, log, 1)
	for i, n := range []string{"old", "middle", "new"} {
		q.Submit(&task{name: n, log: log}, 1+int64(i)*ms)
	}
	clock.set(8 * ms)
	release()
	waitFor(t, "all served", func() bool { return len(log.ran()) == 4 })
	if got := log.ran(); got[1] != "old" {
		t.Fatalf("served %v, want the oldest first with FIFO", got)
	}
}

func TestDeadlineDropsAndCounts(t *testing.T) {
	clock := newFake(1)
	q := New(Config{Workers: 1, Clock: clock.now, Deadline: 100 * time.Millisecond})
	defer q.Close()
	log := newEvents()
	release := blockWorker(t, q, log, 1)
	q.Submit(&task{name: "stale", log: log}, 1)
	clock.set(150 * ms)
	q.Submit(&task{name: "fresh", log: log}, 150*ms)
	release()
	waitFor(t, "fresh served", func() bool { return len(log.ran()) == 2 })
	if r, ok := log.dropped("stale"); !ok || r != Deadline {
		t.Fatalf("stale: dropped=%v reason=%v, want a deadline drop", ok, r)
	}
	if st := q.Stats(); st.Drops[Deadline] != 1 || st.Served != 2 {
		t.Fatalf("stats %+v: want 1 deadline drop, 2 served", st)
	}
	// The worker is not stuck: it serves the next one.
	q.Submit(&task{name: "after", log: log}, 150*ms)
	waitFor(t, "after served", func() bool { return len(log.ran()) == 3 })
}

func TestFullQueueDropsItsOldest(t *testing.T) {
	clock := newFake(1)
	q := New(Config{Workers: 1, Capacity: 3, Clock: clock.now})
	defer q.Close()
	log := newEvents()
	release := blockWorker(t, q, log, 1)
	for _, n := range []string{"1", "2", "3", "4", "5"} {
		q.Submit(&task{name: n, log: log}, 1)
	}
	for _, n := range []string{"1", "2"} {
		if r, ok := log.dropped(n); !ok || r != Full {
			t.Fatalf("query %s: dropped=%v reason=%v, want dropped for a full queue", n, ok, r)
		}
	}
	release()
	waitFor(t, "the rest served", func() bool { return len(log.ran()) == 4 })
	if st := q.Stats(); st.Drops[Full] != 2 {
		t.Fatalf("full drops %d, want 2", st.Drops[Full])
	}
}

// TestCoDelDropsAStandingQueue: a burst that takes 300 ms to serve, each
// query taking 1 ms of the (simulated) clock. The head stays above target:
// after one interval the law starts dropping, the queue is overloaded, and
// every query older than twice the target is shed.
func TestCoDelDropsAStandingQueue(t *testing.T) {
	clock := newFake(1)
	q := New(Config{Workers: 1, Clock: clock.now})
	defer q.Close()
	log := newEvents()
	release := blockWorker(t, q, log, 1)
	for i := range 300 {
		q.Submit(&task{name: fmt.Sprint(i), log: log, clock: clock, advance: ms}, 1)
	}
	release()
	waitFor(t, "queue drained", func() bool { return q.Stats().Queued == 0 })
	st := q.Stats()
	if st.Drops[Late] == 0 {
		t.Fatalf("no CoDel drops in a 300 ms standing queue: %+v", st)
	}
	if st.Served+st.Drops[Late] != 301 {
		t.Fatalf("served %d + dropped %d != 301 submitted", st.Served, st.Drops[Late])
	}
	// Served: the first interval (which began with a wait of 0), then
	// one whole interval with every wait above target, at 1 ms each: from
	// then on the queue is overloaded and everything older than twice the
	// target is shed at once.
	if served := len(log.ran()); served < 100 || served > 110 {
		t.Fatalf("served %d; want about 105: one interval above target, then everything shed", served)
	}
}

func TestBlockedWorkerIsReplaced(t *testing.T) {
	q := New(Config{Workers: 1, MaxWorkers: 4, StallAfter: time.Millisecond, IdleRetire: 50 * time.Millisecond})
	defer q.Close()
	log := newEvents()
	release := blockWorker(t, q, log, Now())
	for i := range 20 {
		q.Submit(&task{name: string(rune('a' + i)), log: log}, Now())
	}
	// The blocker still blocks: the others are served by a replacement.
	waitFor(t, "the queries behind the blocked worker", func() bool { return len(log.ran()) == 20 })
	if w := q.Stats().Workers; w < 2 {
		t.Fatalf("%d workers; a replacement should have started", w)
	}
	release()
	waitFor(t, "the added worker to retire", func() bool { return q.Stats().Workers == 1 })
}

// spin is a query that computes for d: busy, not blocked.
type spin struct {
	d    time.Duration
	done chan struct{}
}

func (s *spin) Run() {
	for start := time.Now(); time.Since(start) < s.d; {
	}
	close(s.done)
}
func (s *spin) Drop(Reason) { close(s.done) }

// TestComputingWorkerIsNotReplaced: a worker busy computing for 200 ms,
// with queries waiting behind it and no CPU to spare, is not "blocked":
// another worker would only take turns on the same CPU.
func TestComputingWorkerIsNotReplaced(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	q := New(Config{Workers: 1, MaxWorkers: 8, StallAfter: time.Millisecond})
	defer q.Close()
	log := newEvents()
	s := &spin{d: 200 * time.Millisecond, done: make(chan struct{})}
	q.Submit(s, Now())
	for i := range 10 {
		q.Submit(&task{name: fmt.Sprint(i), log: log}, Now())
	}
	<-s.done
	if w := q.Stats().Workers; w != 1 {
		t.Fatalf("%d workers: a computing worker was taken for a blocked one", w)
	}
}

func TestWorkerLimitIsADropReason(t *testing.T) {
	q := New(Config{Workers: 1, MaxWorkers: 1, StallAfter: time.Millisecond})
	defer q.Close()
	log := newEvents()
	release := blockWorker(t, q, log, Now())
	q.Submit(&task{name: "waiting", log: log}, Now())
	i := 0
	waitFor(t, "a drop at the worker limit", func() bool {
		i++
		name := "late" + string(rune('a'+i%26)) + string(rune('a'+i/26%26))
		q.Submit(&task{name: name, log: log}, Now())
		r, ok := log.dropped(name)
		return ok && r == Stalled
	})
	release()
	waitFor(t, "progress", func() bool { return len(log.ran()) >= 2 })
	// Progress clears the stall: the next query is served.
	q.Submit(&task{name: "next", log: log}, Now())
	waitFor(t, "next served", func() bool {
		for _, n := range log.ran() {
			if n == "next" {
				return true
			}
		}
		return false
	})
	if q.Stats().Drops[Stalled] == 0 {
		t.Fatal("worker-limit drops not counted")
	}
}

func TestPanicDoesNotKillTheWorker(t *testing.T) {
	q := New(Config{Workers: 1})
	defer q.Close()
	log := newEvents()
	q.Submit(&task{name: "boom", log: log, panics: true}, Now())
	q.Submit(&task{name: "ok", log: log}, Now())
	waitFor(t, "ok served", func() bool { return len(log.ran()) == 1 })
	if st := q.Stats(); st.Panics != 1 {
		t.Fatalf("panics %d, want 1", st.Panics)
	}
}

func TestCloseDrainsTheQueue(t *testing.T) {
	q := New(Config{Workers: 1})
	log := newEvents()
	release := blockWorker(t, q, log, Now())
	for _, n := range []string{"a", "b", "c"} {
		q.Submit(&task{name: n, log: log}, Now())
	}
	closed := make(chan struct{})
	go func() { q.Close(); close(closed) }()
	release()
	<-closed
	if got := log.ran(); len(got) != 4 {
		t.Fatalf("after Close, served %v; want the blocker and all three queued", got)
	}
	// After Close, a query runs in place.
	q.Submit(&task{name: "late", log: log}, Now())
	if got := log.ran(); got[len(got)-1] != "late" {
		t.Fatal("a query submitted after Close was not run")
	}
}

// TestExitedWaitsForTheLastWorker: Close gives up waiting at the
// deadline; Exited is closed only once the worker it left behind has
// served what was queued and exited, when the counts are final.
func TestExitedWaitsForTheLastWorker(t *testing.T) {
	q := New(Config{Workers: 1, MaxWorkers: 1, Deadline: 10 * time.Millisecond})
	log := newEvents()
	release := blockWorker(t, q, log, Now())
	q.Submit(&task{name: "behind", log: log}, Now())
	q.Close() // the deadline passes, the worker still blocked
	select {
	case <-q.Exited():
		t.Fatal("Exited closed while a worker was still blocked")
	default:
	}
	release()
	<-q.Exited()
	if st := q.Stats(); st.Served+st.Drops[Deadline] != 2 || st.Workers != 0 {
		t.Fatalf("after Exited: %+v; want both queries counted, no worker", st)
	}
}

func TestStatsAdd(t *testing.T) {
	a := Stats{Queued: 1, Workers: 2, Served: 3, SojournSum: 0.5, Panics: 1}
	a.Drops[Full], a.Sojourn[0] = 4, 3
	b := Stats{Queued: 2, Workers: 1, Served: 1, SojournSum: 0.25, Dropping: true}
	b.Drops[Full], b.Sojourn[0] = 1, 1
	a.Add(b)
	if a.Queued != 3 || a.Workers != 3 || a.Served != 4 || a.SojournSum != 0.75 || a.Panics != 1 ||
		a.Drops[Full] != 5 || a.Sojourn[0] != 4 || !a.Dropping || a.Overload {
		t.Fatalf("sum %+v", a)
	}
}

// TestOverloadEndsWithCPUToSpare: two intervals in a row in which the
// process used less than cpuBusy of its CPUs end an overload, whatever the
// waits of the queries; a busy one or a single one does not, and without
// the measure only a whole interval below the target does.
func TestOverloadEndsWithCPUToSpare(t *testing.T) {
	var busy int64 = 1 // the process's CPU time, as the test sets it
	o := overload{target: target, interval: interval, cpu: func() (int64, bool) { return busy, true }}
	procs := int64(runtime.GOMAXPROCS(0))
	const t0 = 1000 * ms
	if !o.observe(t0, 3*target, true) {
		t.Fatal("the law's first drop did not start an overload")
	}
	busy += interval * procs * 95 / 100
	if !o.observe(t0+interval, 3*target, false) {
		t.Fatal("an interval at 95% of the CPUs ended the overload")
	}
	busy += interval * procs * 70 / 100
	if !o.observe(t0+2*interval, 3*target, false) {
		t.Fatal("one interval at 70% of the CPUs ended the overload (a collection, the kernel's share: one is not enough)")
	}
	busy += interval * procs * 70 / 100
	if o.observe(t0+3*interval, 3*target, false) {
		t.Fatal("two intervals at 70% of the CPUs did not end the overload")
	}
	if !o.observe(t0+3*interval+ms, 3*target, true) {
		t.Fatal("the law's next drop did not start a new overload")
	}
	o.cpu = nil // not measured: the waits alone
	for now := t0 + 3*interval + 2*ms; now < t0+5*interval; now += ms {
		if !o.observe(now, 2*target, false) {
			t.Fatalf("overload ended at %v while waits stayed above the target", time.Duration(now-t0))
		}
	}
	for now := t0 + 5*interval; now <= t0+7*interval; now += ms {
		o.observe(now, target/2, false)
	}
	if o.on {
		t.Fatal("a whole interval below the target did not end the overload")
	}
}

// TestSubmitAllIsSubmitInTurn: a batch handed over at once is queued as
// its queries one after another would be: the oldest dropped when the
// queue is full (more of them than the 8 the drops keep room for, beside
// the lock), the rest served in arrival order, one idle worker woken for
// each query, and after Close each run on the caller's goroutine.
func TestSubmitAllIsSubmitInTurn(t *testing.T) {
	clock := newFake(1)
	q := New(Config{Workers: 1, Capacity: 3, Clock: clock.now})
	log := newEvents()
	release := blockWorker(t, q, log, 1)
	var batch []Arrived
	for i := range 12 {
		batch = append(batch, Arrived{&task{name: fmt.Sprint(i), log: log}, 1})
	}
	q.SubmitAll(batch)
	for i := range 9 {
		if r, ok := log.dropped(fmt.Sprint(i)); !ok || r != Full {
			t.Fatalf("query %d: dropped=%v reason=%v, want dropped for a full queue", i, ok, r)
		}
	}
	release()
	waitFor(t, "the rest served", func() bool { return len(log.ran()) == 4 })
	if got := log.ran()[1:]; !slices.Equal(got, []string{"9", "10", "11"}) {
		t.Fatalf("served %v, want 9 10 11", got)
	}
	if st := q.Stats(); st.Drops[Full] != 9 {
		t.Fatalf("full drops %d, want 9", st.Drops[Full])
	}
	q.Close()
	after := newEvents()
	q.SubmitAll([]Arrived{{&task{name: "a", log: after}, 1}, {&task{name: "b", log: after}, 1}})
	if got := after.ran(); !slices.Equal(got, []string{"a", "b"}) {
		t.Fatalf("after Close, ran %v, want a b on the caller's goroutine", got)
	}

	// Three idle workers, three queries that each wait for the other two
	// to start: they finish only if each woke its own worker.
	q = New(Config{Workers: 3})
	defer q.Close()
	waitFor(t, "three idle workers", func() bool { q.mu.Lock(); defer q.mu.Unlock(); return len(q.idle) == 3 })
	var started sync.WaitGroup
	started.Add(3)
	log = newEvents()
	var all []Arrived
	for _, n := range []string{"x", "y", "z"} {
		all = append(all, Arrived{&meet{task{name: n, log: log}, &started}, Now()})
	}
	q.SubmitAll(all)
	waitFor(t, "all three served together", func() bool { return len(log.ran()) == 3 })
}

// meet is a task that runs once every other task of its group has started.
type meet struct {
	task
	group *sync.WaitGroup
}

func (m *meet) Run() {
	m.group.Done()
	m.group.Wait()
	m.task.Run()
}

// TestSubmitAllWhileStalled: a batch reaching a queue that may add no
// worker and made no progress is dropped whole, each counted.
func TestSubmitAllWhileStalled(t *testing.T) {
	q := New(Config{Workers: 1})
	defer q.Close()
	q.mu.Lock()
	q.stalled = true
	q.mu.Unlock()
	log := newEvents()
	q.SubmitAll([]Arrived{{&task{name: "a", log: log}, Now()}, {&task{name: "b", log: log}, Now()}})
	for _, n := range []string{"a", "b"} {
		if r, ok := log.dropped(n); !ok || r != Stalled {
			t.Fatalf("query %s: dropped=%v reason=%v, want Stalled", n, ok, r)
		}
	}
	if st := q.Stats(); st.Drops[Stalled] != 2 {
		t.Fatalf("stalled drops %d, want 2", st.Drops[Stalled])
	}
}

// TestServedWaitsAreCounted: the waits of the queries a worker served are
// in Stats, each in its bucket, with their sum.
func TestServedWaitsAreCounted(t *testing.T) {
	clock := newFake(1)
	q := New(Config{Workers: 1, Clock: clock.now})
	defer q.Close()
	log := newEvents()
	release := blockWorker(t, q, log, 1)
	for i, arrival := range []int64{1, 1, 2 * ms} {
		q.Submit(&task{name: fmt.Sprint(i), log: log}, arrival)
	}
	clock.set(3 * ms) // waits of about 3 ms, 3 ms and 1 ms, the blocker's of none
	release()
	waitFor(t, "all served", func() bool { return len(log.ran()) == 4 })
	var st Stats
	waitFor(t, "the waits counted", func() bool {
		st = q.Stats()
		var n uint64
		for _, c := range st.Sojourn {
			n += c
		}
		return n == 4
	})
	bucket := func(s float64) int { // the bucket of a wait of s seconds
		i := 0
		for i < len(SojournBounds) && s > SojournBounds[i] {
			i++
		}
		return i
	}
	want := make([]uint64, len(st.Sojourn))
	want[bucket(0)]++
	want[bucket(0.003)] += 2
	want[bucket(0.001)]++
	if !slices.Equal(st.Sojourn[:], want) {
		t.Errorf("sojourn buckets %v, want %v", st.Sojourn, want)
	}
	if wantSum := float64(3*ms-1+3*ms-1+1*ms) / 1e9; st.SojournSum < wantSum*0.999 || st.SojournSum > wantSum*1.001 {
		t.Errorf("sojourn sum %g s, want %g", st.SojournSum, wantSum)
	}
}
