package codel

import (
	"sync"
	"testing"
	"time"
)

// fakeSource is an attendant's source: each wait blocks until the test
// gives it a batch, queues the batch with SubmitAllTaking, then holds for
// hold (the time a wrongly woken worker would need to take the first task
// away), or until interrupt; then every wait returns at once.
type fakeSource struct {
	q           *Queue
	batches     chan []Arrived
	waits       chan struct{} // a value as each wait begins
	stop        chan struct{}
	stopOnce    sync.Once
	hold        time.Duration
	interrupted chan struct{} // closed by interrupt too, for the test
}

func newFakeSource(q *Queue, hold time.Duration) *fakeSource {
	return &fakeSource{q: q, batches: make(chan []Arrived), waits: make(chan struct{}, 16),
		stop: make(chan struct{}), hold: hold}
}

func (s *fakeSource) wait() bool {
	s.waits <- struct{}{}
	select {
	case b := <-s.batches:
		s.q.SubmitAllTaking(b)
		time.Sleep(s.hold)
	case <-s.stop:
	}
	return true
}

func (s *fakeSource) interrupt() { s.stopOnce.Do(func() { close(s.stop) }) }

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
// an attendant on a fake source; both are closed when the test ends, and
// the test fails if the attendant does not return after Close.
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
		q.Attend(src.wait, src.interrupt)
		close(returned)
	}()
	t.Cleanup(func() {
		q.Close()
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
// attendant's source is served by the attendant itself, no idle worker
// woken for it: one goroutine readied a query, not two.
func TestAnAttendantServesWhatItWaitedFor(t *testing.T) {
	q, src := attendedQueue(t, Config{Workers: 2}, 20*time.Millisecond)
	task := &ranOn{on: make(chan int, 1)}
	src.batches <- []Arrived{{task, Now()}}
	if id := <-task.on; id != q.cfg.Workers {
		t.Fatalf("served by worker %d, want the attendant (%d): an idle worker was woken for it", id, q.cfg.Workers)
	}
	// A batch of three: the attendant takes one, and wakes idle workers
	// for the other two.
	var tasks []Arrived
	on := make(chan int, 3)
	gate := make(chan struct{})
	for range 3 {
		tasks = append(tasks, Arrived{&ranOn{on: on, gate: gate}, Now()})
	}
	<-src.waits
	src.batches <- tasks
	seen := map[int]bool{}
	for range 3 {
		seen[<-on] = true // each holds its worker at the gate: three workers
	}
	close(gate)
	if len(seen) != 3 {
		t.Fatalf("three queries at once ran on workers %v, want three", seen)
	}
}

// longAttendant starts an attended queue of workers workers whose
// attendant's queries have lately taken long (1 ms): with every worker held,
// it serves two back to back, the first taking 1 ms. Having had no idle
// worker then, it left its source to none. It returns with the workers
// parked again.
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
	<-src.waits
	if got := log.ran(); len(got) != 2 {
		t.Fatalf("ran %v before the attendant waited again, want long and next", got)
	}
	select {
	case <-src.waits:
		t.Fatal("a second wait on the source with no idle worker to make it")
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
// to an idle worker as it takes the next one, so that a query arriving
// meanwhile does not wait for it.
func TestAStandInWatchesTheSourceWhileTheAttendantIsLong(t *testing.T) {
	q, src, clock := longAttendant(t, 2)
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
}

// TestAWorkerBlockedBesideAStandInIsReplaced: a worker waiting on a
// source for the attendant takes none of the queue's meanwhile: the other
// one, blocked (in I/O) with queries queued behind it, is replaced.
func TestAWorkerBlockedBesideAStandInIsReplaced(t *testing.T) {
	q, src, clock := longAttendant(t, 2)
	q.cfg.StallAfter = time.Millisecond // read under q.mu, set before the stall timer is armed
	gate := &ranOn{on: make(chan int, 1), gate: make(chan struct{})}
	defer close(gate.gate)
	src.batches <- []Arrived{{gate, clock.now()}}
	<-gate.on
	<-src.waits // the stand-in waits
	log := newEvents()
	release := blockWorker(t, q, log, clock.now())
	defer release()
	for _, n := range []string{"a", "b", "c"} {
		q.Submit(&task{name: n, log: log}, clock.now())
	}
	clock.set(clock.now() + 10*ms) // the blocker and the queries behind it, past StallAfter
	waitFor(t, "the queries behind the blocked worker", func() bool { return len(log.ran()) == 3 })
}

// TestAStandInLeavesAWorkerParked: with one worker parked, the attendant
// leaves its source to none: a query queued by another (TCP, or back from
// a slow step) would find every worker waiting on a source, and none
// would take it.
func TestAStandInLeavesAWorkerParked(t *testing.T) {
	q, src, clock := longAttendant(t, 1)
	gate := &ranOn{on: make(chan int, 1), gate: make(chan struct{})}
	defer close(gate.gate)
	src.batches <- []Arrived{{gate, clock.now()}}
	<-gate.on // the attendant took it, and stood a worker in or not
	q.mu.Lock()
	idle := len(q.idle)
	q.mu.Unlock()
	if idle != 1 {
		t.Fatal("the only parked worker was left the source to wait on")
	}
	done := make(chan int, 1)
	q.Submit(&ranOn{on: done}, clock.now())
	if id := <-done; id != 0 {
		t.Fatalf("a query queued meanwhile ran on worker %d, want the parked one", id)
	}
}

// TestCloseInterruptsTheWaits: Close does not wait for a worker waiting on
// a source (the socket stays open until the queue is closed): it
// interrupts the wait, and the attendant returns (attendedQueue's cleanup).
func TestCloseInterruptsTheWaits(t *testing.T) {
	q, src := attendedQueue(t, Config{Workers: 1, Deadline: time.Hour}, 0)
	closed := make(chan struct{})
	go func() { q.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close waited for the attendant")
	}
	select {
	case <-src.stop:
	default:
		t.Fatal("Close returned without interrupting the attendant's wait")
	}
}

// TestAWorkerBlockedBesideAWaitingAttendantIsReplaced: a worker blocked
// (in I/O) with queries queued behind it is replaced, though the attendant
// is not in a query: it waits on its source, and takes none of the queue's.
func TestAWorkerBlockedBesideAWaitingAttendantIsReplaced(t *testing.T) {
	q, _ := attendedQueue(t, Config{Workers: 1, MaxWorkers: 4, StallAfter: time.Millisecond}, 0)
	log := newEvents()
	release := blockWorker(t, q, log, Now())
	defer release()
	for _, n := range []string{"a", "b", "c"} {
		q.Submit(&task{name: n, log: log}, Now())
	}
	waitFor(t, "the queries behind the blocked worker", func() bool { return len(log.ran()) == 3 })
}
