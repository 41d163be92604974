package codel

import (
	"context"
	"testing"
	"time"
)

// cont is a continuation that records its steps.
type cont struct {
	log     *events
	name    string
	slow    chan struct{} // Slow waits on it, if set
	clock   *fakeClock    // Slow moves it to after, if set
	after   int64
	resumed chan struct{}
}

func (c *cont) Slow() {
	if c.slow != nil {
		<-c.slow
	}
	if c.clock != nil {
		c.clock.set(c.after)
	}
}

func (c *cont) Resume() {
	c.log.mu.Lock()
	c.log.runs = append(c.log.runs, c.name+" resumed")
	c.log.mu.Unlock()
	close(c.resumed)
}

func (c *cont) Drop(r Reason) {
	c.log.mu.Lock()
	c.log.drop[c.name] = r
	c.log.mu.Unlock()
	close(c.resumed)
}

// suspender is a query whose work, on a worker, is to suspend c.
type suspender struct {
	q, pool *Queue
	arrival int64
	c       Continuation
}

func (s *suspender) Run()        { Hop{Queue: s.q, Arrival: s.arrival}.Suspend(s.pool, s.c) }
func (s *suspender) Drop(Reason) {}

// TestWorkerNeverWaitsForTheSlowStep: the only worker hands the slow step
// to the pool and serves other queries while it is away; the continuation
// comes back to the worker and finishes.
func TestWorkerNeverWaitsForTheSlowStep(t *testing.T) {
	q := New(Config{Workers: 1, MaxWorkers: 1})
	defer q.Close()
	pool := New(Config{Workers: 1, MaxWorkers: 1})
	defer pool.Close()
	log := newEvents()
	c := &cont{log: log, name: "alias", slow: make(chan struct{}), resumed: make(chan struct{})}
	q.Submit(&suspender{q: q, pool: pool, arrival: Now(), c: c}, Now())
	for _, n := range []string{"a", "b", "c"} {
		q.Submit(&task{name: n, log: log}, Now())
	}
	waitFor(t, "the plain queries, while the slow step waits", func() bool { return len(log.ran()) == 3 })
	close(c.slow)
	<-c.resumed
	if got := log.ran(); got[3] != "alias resumed" {
		t.Fatalf("ran %v", got)
	}
}

// TestLateOnReturnIsDroppedThere: the slow step took the query past its
// deadline; the worker that takes it back drops it, counted, and nobody
// answers it.
func TestLateOnReturnIsDroppedThere(t *testing.T) {
	clock := newFake(1)
	q := New(Config{Workers: 1, Clock: clock.now, Deadline: 100 * time.Millisecond})
	defer q.Close()
	pool := New(Config{Workers: 1, Clock: clock.now, Deadline: 100 * time.Millisecond})
	defer pool.Close()
	log := newEvents()
	c := &cont{log: log, name: "alias", clock: clock, after: 300 * ms, resumed: make(chan struct{})}
	q.Submit(&suspender{q: q, pool: pool, arrival: 1, c: c}, 1)
	<-c.resumed
	if r, ok := log.dropped("alias"); !ok || r != Deadline {
		t.Fatalf("dropped=%v reason=%v; want a deadline drop on return", ok, r)
	}
	if d := q.Stats().Drops[Deadline]; d != 1 {
		t.Fatalf("the queue it came back to counted %d deadline drops, want 1", d)
	}
}

// TestPoolChecksWhenItTakes: a continuation that is already late when
// the pool takes it is dropped there, and its slow step never runs.
func TestPoolChecksWhenItTakes(t *testing.T) {
	clock := newFake(500 * ms)
	q := New(Config{Workers: 1, Clock: clock.now, Deadline: 100 * time.Millisecond})
	defer q.Close()
	pool := New(Config{Workers: 1, Clock: clock.now, Deadline: 100 * time.Millisecond})
	defer pool.Close()
	log := newEvents()
	c := &cont{log: log, name: "alias", slow: make(chan struct{}), resumed: make(chan struct{})}
	Hop{Queue: q, Arrival: 1}.Suspend(pool, c) // arrived 500 ms ago
	<-c.resumed
	if r, ok := log.dropped("alias"); !ok || r != Deadline {
		t.Fatalf("dropped=%v reason=%v; want a deadline drop at the pool", ok, r)
	}
	if d := pool.Stats().Drops[Deadline]; d != 1 {
		t.Fatalf("pool counted %d deadline drops, want 1", d)
	}
}

func TestInPlaceHop(t *testing.T) {
	clock := newFake(1)
	pool := New(Config{Workers: 1, Clock: clock.now, Deadline: 100 * time.Millisecond})
	defer pool.Close()
	log := newEvents()
	ok := &cont{log: log, name: "fast", resumed: make(chan struct{})}
	Hop{Arrival: 1}.Suspend(pool, ok)
	if got := log.ran(); len(got) != 1 || got[0] != "fast resumed" {
		t.Fatalf("in place: ran %v", got)
	}
	late := &cont{log: log, name: "slow", clock: clock, after: 200 * ms, resumed: make(chan struct{})}
	Hop{Arrival: 1}.Suspend(pool, late)
	if r, ok := log.dropped("slow"); !ok || r != Deadline {
		t.Fatalf("in place, late after the slow step: dropped=%v reason=%v", ok, r)
	}
}

func TestContext(t *testing.T) {
	if _, ok := FromContext(context.Background()); ok {
		t.Fatal("a hop in an empty context")
	}
	h := Hop{Arrival: 42}
	if got, ok := FromContext(NewContext(context.Background(), h)); !ok || got != h {
		t.Fatalf("got %v %v", got, ok)
	}
}
