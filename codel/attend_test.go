package codel

import (
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeSource is an attendant's Source: each Wait blocks until the test
// gives it a batch, queues the batch with SubmitAllTaking, then holds for
// hold (the time a wrongly woken worker would need to take the first task
// away); or until a Nudge, or Interrupt, after which every Wait returns at
// once.
type fakeSource struct {
	q        *Queue
	batches  chan []Arrived
	waits    chan struct{} // a value as each wait begins
	parked   chan int      // the workers still parked once a batch is queued
	nudge    chan struct{}
	stop     chan struct{}
	stopOnce sync.Once
	hold     time.Duration
}

func newFakeSource(q *Queue, hold time.Duration) *fakeSource {
	return &fakeSource{q: q, batches: make(chan []Arrived), waits: make(chan struct{}, 16),
		parked: make(chan int, 16), nudge: make(chan struct{}, 1), stop: make(chan struct{}), hold: hold}
}

func (s *fakeSource) Wait() bool {
	s.waits <- struct{}{}
	select {
	case b := <-s.batches:
		s.q.SubmitAllTaking(s, b)
		s.q.mu.Lock()
		s.parked <- len(s.q.idle)
		s.q.mu.Unlock()
		time.Sleep(s.hold)
	case <-s.nudge:
	case <-s.stop:
	}
	return true
}

func (s *fakeSource) Nudge() {
	select {
	case s.nudge <- struct{}{}:
	default:
	}
}

func (s *fakeSource) Interrupt() { s.stopOnce.Do(func() { close(s.stop) }) }

// whose is a worker's Local that says which worker it is: the order it
// was made in (New's workers first, then the attendant's).
type whose struct{ id int }

func (*whose) Flush() {}

// ranOn is a task that records the Local of the worker that ran it.
type ranOn struct {
	on   chan int
	gate chan struct{} // RunLocal waits on it, if set
}

func (t *ranOn) Run() { panic("a LocalTask runs with RunLocal") }
func (t *ranOn) RunLocal(l Local, _ int64) {
	t.on <- l.(*whose).id
	if t.gate != nil {
		<-t.gate
	}
}
func (t *ranOn) Drop(Reason) {}

// attendedQueue starts a queue of cfg, its workers' Locals numbered, and
// an attendant on a fake source; it returns once the attendant waits and
// the workers are parked. Both
// are closed when the test ends, and the test fails if Close returns
// before the attendant has exited.
func attendedQueue(t *testing.T, cfg Config, hold time.Duration) (*Queue, *fakeSource) {
	t.Helper()
	var mu sync.Mutex
	made := 0
	cfg.Local = func() Local {
		mu.Lock()
		defer mu.Unlock()
		made++
		return &whose{id: made - 1}
	}
	q := New(cfg)
	src := newFakeSource(q, hold)
	returned := make(chan struct{})
	go func() {
		q.Attend(src)
		close(returned)
	}()
	t.Cleanup(func() {
		q.Close()
		if n := q.Stats().Workers; n != 0 {
			t.Errorf("Close returned with %d workers still running: it waits for the attendant too", n)
		}
		select {
		case <-returned:
		case <-time.After(10 * time.Second):
			t.Error("the attendant was still in Attend 10 s after Close")
		}
	})
	<-src.waits // the attendant waits on its source
	waitFor(t, "the workers to park", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.idle) == cfg.Workers
	})
	return q, src
}

// TestAnAttendantServesWhatItWaitedFor: a query that arrives at the
// attendant's source is served by the attendant itself, no parked worker
// woken for it: one goroutine readied a query, not two.
func TestAnAttendantServesWhatItWaitedFor(t *testing.T) {
	q, src := attendedQueue(t, Config{Workers: 2}, 20*time.Millisecond)
	task := &ranOn{on: make(chan int, 1)}
	src.batches <- []Arrived{{task, Now()}}
	if id := <-task.on; id != q.cfg.Workers {
		t.Fatalf("served by worker %d, want the attendant (%d): a parked worker was woken for it", id, q.cfg.Workers)
	}
}

// TestAnAttendantKeepsWhatItServesInAHandHold: of a batch its wait
// queued, the attendant keeps for itself as many as it serves in
// handHold by its queries' recent time (at most handMax), and wakes parked
// workers only for the rest: two before its queries were ever timed.
func TestAnAttendantKeepsWhatItServesInAHandHold(t *testing.T) {
	clock := newFake(1)
	_, src := attendedQueue(t, Config{Workers: 2, Clock: clock.now}, 0)
	log := newEvents()
	for _, c := range []struct{ n, parked int }{
		{2, 2},       // not timed yet: it keeps two, and times the first by the second
		{handMax, 2}, // 10 µs a query: it serves ten in handHold, keeps handMax
		{handMax + 1, 1},
	} {
		if parked := burst(t, src, clock, log, c.n, 0); parked != c.parked {
			t.Fatalf("a batch of %d left %d of 2 workers parked, want %d", c.n, parked, c.parked)
		}
	}
}

// TestALongAttendantKeepsOne: an attendant whose queries have lately taken
// longer than handHold keeps only the first of a batch, and wakes the
// parked workers for the others.
func TestALongAttendantKeepsOne(t *testing.T) {
	_, src, clock := longAttendant(t, 2)
	var tasks []Arrived
	on := make(chan int, 3)
	gate := make(chan struct{})
	for range 3 {
		tasks = append(tasks, Arrived{&ranOn{on: on, gate: gate}, clock.now()})
	}
	src.batches <- tasks
	defer close(gate)
	if parked := <-src.parked; parked != 0 {
		t.Fatalf("a batch of 3 left %d of 2 workers parked, want none", parked)
	}
	seen := map[int]bool{}
	for range 3 {
		select {
		case id := <-on:
			seen[id] = true // each holds its worker at the gate: three workers
		case <-time.After(10 * time.Second):
			t.Fatalf("three queries at once: only workers %v served, 10 s on", seen)
		}
	}
}

// TestAQueryQueuedWhileTheAttendantWaitsNudgesIt: a query queued by another
// (TCP, one back from a slow step) while no worker is parked, the one
// worker held and the attendant waiting on its source, nudges the
// attendant out of its wait to serve it.
func TestAQueryQueuedWhileTheAttendantWaitsNudgesIt(t *testing.T) {
	q, _ := attendedQueue(t, Config{Workers: 1}, 0)
	release := blockWorker(t, q, newEvents(), Now())
	defer release()
	done := make(chan int, 1)
	q.Submit(&ranOn{on: done}, Now())
	select {
	case id := <-done:
		if id != q.cfg.Workers {
			t.Fatalf("served by worker %d, want the attendant", id)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a query queued while the attendant waited was not served")
	}
}

// longAttendant starts an attended queue of workers workers whose
// attendant's queries have lately taken long (1 ms): with every worker
// held, it serves two back to back, the first taking 1 ms; having had no
// parked worker then, it left its source to none. It returns with the
// workers parked again.
func longAttendant(t *testing.T, workers int) (*Queue, *fakeSource, *fakeClock) {
	t.Helper()
	clock := newFake(1)
	q, src := attendedQueue(t, Config{Workers: workers, Clock: clock.now}, 0)
	log := newEvents()
	var releases []func()
	for range workers {
		releases = append(releases, blockWorker(t, q, log, clock.now()))
	}
	src.batches <- []Arrived{{&task{name: "long", log: log, clock: clock, advance: ms}, clock.now()}, {&task{name: "next", log: log}, clock.now()}}
	<-src.parked
	<-src.waits
	if got := log.ran(); len(got) != 2 {
		t.Fatalf("ran %v before the attendant waited again, want long and next", got)
	}
	select {
	case <-src.waits:
		t.Fatal("a second wait on the source with no parked worker to make it")
	default:
	}
	for _, release := range releases {
		release()
	}
	waitFor(t, "the workers to park", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.idle) == workers
	})
	return q, src, clock
}

// TestAStandInWatchesTheSourceWhileTheAttendantIsLong: once its queries
// have lately taken longer than handHold, the attendant leaves its source
// to a parked worker as it takes the next one, so that a query arriving
// meanwhile does not wait for it. A query queued by another meanwhile,
// with every worker busy or waiting, nudges the stand-in out of its wait.
func TestAStandInWatchesTheSourceWhileTheAttendantIsLong(t *testing.T) {
	q, src, clock := longAttendant(t, 1)
	gate := &ranOn{on: make(chan int, 1), gate: make(chan struct{})}
	defer close(gate.gate)
	src.batches <- []Arrived{{gate, clock.now()}}
	if id := <-gate.on; id != q.cfg.Workers {
		t.Fatalf("served by worker %d, want the attendant", id)
	}
	select {
	case <-src.waits: // the stand-in, while the attendant is in the gate
	case <-time.After(10 * time.Second):
		t.Fatal("no worker waits on the source while the attendant serves a long query")
	}
	done := make(chan int, 1)
	q.Submit(&ranOn{on: done}, clock.now())
	select {
	case id := <-done:
		if id == q.cfg.Workers {
			t.Fatal("served by the attendant, which is in the gate")
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a query queued while the stand-in waited was not served")
	}
}

// TestAStandInKeepsOneWhileTheAttendantIsLong: a stand-in, waiting while
// the attendant serves a long query, keeps only the first of a batch, by
// the attendant's time (its own was never taken), and wakes a parked
// worker for the other.
func TestAStandInKeepsOneWhileTheAttendantIsLong(t *testing.T) {
	_, src, clock := longAttendant(t, 2)
	gate := &ranOn{on: make(chan int, 1), gate: make(chan struct{})}
	defer close(gate.gate)
	src.batches <- []Arrived{{gate, clock.now()}}
	<-src.parked
	<-gate.on
	select {
	case <-src.waits: // the stand-in, while the attendant is in the gate
	case <-time.After(10 * time.Second):
		t.Fatal("no worker waits on the source while the attendant serves a long query")
	}
	// Both held at a gate: a worker woken for the second cannot serve it
	// and park again before the parked ones are counted.
	on, held := make(chan int, 2), make(chan struct{})
	defer close(held)
	src.batches <- []Arrived{{&ranOn{on: on, gate: held}, clock.now()}, {&ranOn{on: on, gate: held}, clock.now()}}
	if parked := <-src.parked; parked != 0 {
		t.Fatalf("the stand-in's batch of 2 left %d worker parked, want none", parked)
	}
}

// TestCloseInterruptsTheWaits: Close ends the waits on a source (the
// socket stays open until the queue is closed), and waits for the
// attendant to return (attendedQueue's cleanup).
func TestCloseInterruptsTheWaits(t *testing.T) {
	q, src := attendedQueue(t, Config{Workers: 2}, 0)
	closed := make(chan struct{})
	go func() { q.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited on and on for the attendant")
	}
	select {
	case <-src.stop:
	default:
		t.Fatal("Close returned without interrupting the attendant's wait")
	}
}

// TestAWorkerFeedsNotAfterALongWait: a worker that waited on its source
// for longer than handHold (queries arriving sparsely) serves what the
// wait read and waits again without feeding in between: its next wait
// reads the source first. After a short wait (queries arriving close
// together) it feeds once it has served them, as a worker that took the
// last queued query does.
func TestAWorkerFeedsNotAfterALongWait(t *testing.T) {
	clock := newFake(1)
	var feeds atomic.Int64
	_, src := attendedQueue(t, Config{Workers: 1, Clock: clock.now, Feed: func(int, Source) { feeds.Add(1) }}, 0)
	log := newEvents()
	for i, c := range []struct {
		wait  int64
		feeds int64
	}{
		{2 * handHold, 0},
		{handHold / 2, 1},
		{2 * handHold, 0},
	} {
		before := feeds.Load()
		clock.set(clock.now() + c.wait) // while the attendant waits
		src.batches <- []Arrived{{&task{name: fmt.Sprint(i), log: log}, clock.now()}}
		<-src.parked
		<-src.waits
		if n := len(log.ran()); n != i+1 {
			t.Fatalf("%d queries served, want %d", n, i+1)
		}
		if got := feeds.Load() - before; got != c.feeds {
			t.Errorf("after a wait of %v: %d feeds before the next wait, want %d", time.Duration(c.wait), got, c.feeds)
		}
	}
}

// TestAFeedNamesTheSourceWaitedOnNext: the feed an attendant makes once
// it has served what its wait read, the queue empty, names its source,
// which its next wait reads first (the caller need not read it twice); a
// worker that parks next names none.
func TestAFeedNamesTheSourceWaitedOnNext(t *testing.T) {
	clock := newFake(1)
	nexts := make(chan Source, 16)
	feed := func(_ int, next Source) { nexts <- next }
	_, src := attendedQueue(t, Config{Workers: 1, Clock: clock.now, Feed: feed}, 0)
	for len(nexts) > 0 {
		<-nexts // the workers' feeds before they first parked or waited
	}
	src.batches <- []Arrived{{&task{name: "a", log: newEvents()}, clock.now()}}
	<-src.parked
	<-src.waits
	if len(nexts) != 1 {
		t.Fatalf("%d feeds between two waits after a short one, want 1", len(nexts))
	}
	if next := <-nexts; next != src {
		t.Fatalf("the feed before the attendant's wait named %v, want its source", next)
	}

	q := New(Config{Workers: 1, Feed: feed})
	defer q.Close()
	q.Submit(&task{name: "b", log: newEvents()}, Now())
	select {
	case next := <-nexts:
		if next != nil {
			t.Fatalf("a worker with no source named %v in its feed", next)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("the worker did not feed")
	}
}

// TestASparseAttendantKeepsABurst: an attendant whose waits on its source
// last twice as long as a query takes it, or longer, keeps of a burst
// that came together as many as it serves in keepHold (at most keepMax),
// and wakes parked workers only for the rest. (One whose waits are short
// keeps a hand's worth: TestAnAttendantKeepsWhatItServesInAHandHold.)
func TestASparseAttendantKeepsABurst(t *testing.T) {
	clock := newFake(1)
	_, src := attendedQueue(t, Config{Workers: 2, Clock: clock.now}, 0)
	log := newEvents()
	batch := func(size int, wait int64) int {
		t.Helper()
		return burst(t, src, clock, log, size, wait)
	}
	batch(2, 0)     // the second times the first: 10 µs a query
	batch(1, 10*ms) // its waits 1.25 ms lately, past twice 10 µs
	for _, c := range []struct{ size, parked int }{
		{20, 2},          // 400 µs at 10 µs a query: all 20
		{keepMax + 1, 1}, // keepMax, and one woken for the last
	} {
		if parked := batch(c.size, 10*ms); parked != c.parked {
			t.Fatalf("after long waits a burst of %d left %d of 2 workers parked, want %d", c.size, parked, c.parked)
		}
	}
}

// burst gives src's attendant, once the clock has moved by wait while it
// waits, size tasks of 10 µs together, and returns how many workers were
// still parked once they were queued; it returns when they are served
// and the attendant waits again.
func burst(t *testing.T, src *fakeSource, clock *fakeClock, log *events, size int, wait int64) int {
	t.Helper()
	clock.set(clock.now() + wait)
	before := len(log.ran())
	// The tasks wait at a gate until the parked workers are counted: a
	// worker woken for the batch could otherwise serve it and park again
	// before the count, and be counted as never woken.
	gate := make(chan struct{})
	var b []Arrived
	for i := range size {
		b = append(b, Arrived{&task{name: fmt.Sprint(before + i), log: log, block: gate, clock: clock, advance: 10 * int64(time.Microsecond)}, clock.now()})
	}
	src.batches <- b
	parked := <-src.parked
	close(gate)
	waitFor(t, "the batch to be served", func() bool { return len(log.ran()) == before+size })
	<-src.waits
	return parked
}

// TestEachSourceKeepsByItsOwnWaits: with an attendant for each of two
// sources, one busy and one idle nearly all the time, a burst at the busy
// one keeps a hand (and wakes the parked workers for the rest), though the
// other's waits are long; a burst at the quiet one keeps a burst's worth.
// Judged by the longest waits of any waiting worker, the quiet one's made
// the busy one keep 32 while the workers that could serve them stayed
// parked. What each keeps is read from the queue itself: counting the
// workers left parked would race with those woken, which serve the burst
// and park again.
func TestEachSourceKeepsByItsOwnWaits(t *testing.T) {
	clock := newFake(1)
	q, busy := attendedQueue(t, Config{Workers: 2, Clock: clock.now}, 0)
	quiet := newFakeSource(q, 0)
	go q.Attend(quiet) // Close, in attendedQueue's cleanup, interrupts it and waits for it
	<-quiet.waits
	log := newEvents()
	burst(t, busy, clock, log, 2, 0) // the second times the first: 10 µs a query
	burst(t, quiet, clock, log, 2, 0)
	q.mu.Lock()
	defer q.mu.Unlock()
	for _, w := range q.workers { // both wait on their sources now
		switch w.attend {
		case busy:
			w.waits = 0 // it found queries each time it looked
		case quiet:
			w.waits = 10 * ms // idle nearly all the time
		}
	}
	if got, want := q.sourceKeeps(busy), 1+handBehind(10*int64(time.Microsecond)); got != want {
		t.Errorf("the busy source keeps %d of a burst, want a hand: %d", got, want)
	}
	if got, want := q.sourceKeeps(quiet), keepMax; got != want {
		t.Errorf("the quiet source keeps %d of a burst, want %d", got, want)
	}
}
