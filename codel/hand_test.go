package codel

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"
)

// computing is a task that says it only computes (Computing), so it may be
// taken into a worker's hand. One that blocks stands for a long
// computation.
type computing struct{ *task }

func (computing) OnlyComputes() bool { return true }

// handRun queues, behind a blocker that holds the queue's only one of
// workers workers, a task named "gate" that blocks (computing or not, as
// gateComputes) and then the tasks named by names (those starting with
// "io" do not say they only compute), and releases the blocker. It returns
// how many stay queued while the worker that took the gate is held in it,
// and a func that lets the gate go. advance is how far the clock moves
// while the blocker runs: the first time the worker measures.
func handRun(t *testing.T, q *Queue, clock *fakeClock, log *events, gateComputes bool, advance int64, names ...string) (queued int, open func()) {
	t.Helper()
	var releases []func()
	for range q.cfg.Workers {
		releases = append(releases, blockWorker(t, q, log, clock.now()))
	}
	gate := &task{name: "gate", log: log, block: make(chan struct{}), started: make(chan struct{})}
	var g Task = gate
	if gateComputes {
		g = computing{gate}
	}
	q.Submit(g, clock.now())
	for _, n := range names {
		var tk Task = &task{name: n, log: log}
		if !strings.HasPrefix(n, "io") {
			tk = computing{tk.(*task)}
		}
		q.Submit(tk, clock.now())
	}
	clock.set(clock.now() + advance)
	releases[0]() // its worker takes the gate next
	<-gate.started
	return q.Stats().Queued, func() {
		close(gate.block)
		for _, r := range releases[1:] {
			r()
		}
	}
}

// handQueue starts a queue of cfg on a still clock, closed when the test ends.
func handQueue(t *testing.T, cfg Config) (*Queue, *fakeClock, *events) {
	clock := newFake(1)
	cfg.Clock = clock.now
	q := New(cfg)
	t.Cleanup(q.Close)
	return q, clock, newEvents()
}

func names(n int) []string {
	var s []string
	for i := range n {
		s = append(s, fmt.Sprint(i))
	}
	return s
}

// TestAWorkerTakesAHand: with more queries queued than workers, a worker
// takes up to handMax under one taking of the lock, and serves them in
// their order; each counts as served.
func TestAWorkerTakesAHand(t *testing.T) {
	q, clock, log := handQueue(t, Config{Workers: 1})
	queued, open := handRun(t, q, clock, log, true, 0, names(10)...)
	if want := 10 - (handMax - 1); queued != want {
		t.Fatalf("%d queued while the worker is in the gate, want %d: the gate and a hand of %d taken together", queued, want, handMax-1)
	}
	open()
	waitFor(t, "all served", func() bool { return len(log.ran()) == 12 })
	if got, want := log.ran(), append([]string{"blocker", "gate"}, names(10)...); !slices.Equal(got, want) {
		t.Fatalf("served %v, want %v", got, want)
	}
	if st := q.Stats(); st.Served != 12 || st.Queued != 0 {
		t.Fatalf("stats %+v: want 12 served, none queued", st)
	}
}

// TestAHandIsTheQueuesShare: with two workers, a hand holds no more than
// half of what is queued, so that the other worker has its share.
func TestAHandIsTheQueuesShare(t *testing.T) {
	q, clock, log := handQueue(t, Config{Workers: 2})
	queued, open := handRun(t, q, clock, log, true, 0, names(10)...)
	defer open()
	if queued != 5 {
		t.Fatalf("%d queued while a worker is in the gate, want 5: half of the 10 left, with two workers", queued)
	}
}

// TestNoHandBehindATaskThatMayBlock: no hand is taken with a task that
// does not say it only computes, and a hand ends at the first such task.
func TestNoHandBehindATaskThatMayBlock(t *testing.T) {
	for _, c := range []struct {
		name         string
		gateComputes bool
		names        []string
		queued       int
	}{
		{"the gate may block: no hand", false, names(10), 10},
		{"the third of the hand may block: the hand ends there", true, append([]string{"0", "1", "io"}, names(7)...), 7},
	} {
		t.Run(c.name, func(t *testing.T) {
			q, clock, log := handQueue(t, Config{Workers: 1})
			queued, open := handRun(t, q, clock, log, c.gateComputes, 0, c.names...)
			open()
			if queued != c.queued {
				t.Fatalf("%d queued while the worker is in the gate, want %d", queued, c.queued)
			}
			waitFor(t, "all served", func() bool { return len(log.ran()) == 12 })
		})
	}
}

// TestNoHandForCostlyQueries: a worker whose last query took longer than
// handHold takes no hand: the queries in it would wait that long each,
// unseen by CoDel.
func TestNoHandForCostlyQueries(t *testing.T) {
	q, clock, log := handQueue(t, Config{Workers: 1})
	queued, open := handRun(t, q, clock, log, true, handHold+1, names(10)...)
	open()
	if queued != 10 {
		t.Fatalf("%d queued while the worker is in the gate, after a query of %v; want 10: no hand", queued, time.Duration(handHold+1))
	}
	waitFor(t, "all served", func() bool { return len(log.ran()) == 12 })
}

// TestAHandKeepsTheDeadline: a query in a hand whose wait passes the
// deadline before its turn is dropped there, counted as the queue's
// deadline drops are.
func TestAHandKeepsTheDeadline(t *testing.T) {
	q, clock, log := handQueue(t, Config{Workers: 1, Deadline: 100 * time.Millisecond})
	_, open := handRun(t, q, clock, log, true, 0, names(10)...)
	clock.set(150 * ms)
	open()
	waitFor(t, "all dropped", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		return len(log.drop) == 10
	})
	for _, n := range names(10) {
		if r, ok := log.dropped(n); !ok || r != Deadline {
			t.Fatalf("%s: dropped=%v reason=%v, want a deadline drop", n, ok, r)
		}
	}
	if got := log.ran(); len(got) != 2 {
		t.Fatalf("ran %v, want only the blocker and the gate", got)
	}
	if st := q.Stats(); st.Drops[Deadline] != 10 || st.Served != 2 {
		t.Fatalf("stats %+v: want 10 deadline drops, 2 served", st)
	}
}

// TestCloseServesTheHand: a queue closed while a worker holds a hand
// still serves it, and what stays queued, before the worker exits.
func TestCloseServesTheHand(t *testing.T) {
	q, clock, log := handQueue(t, Config{Workers: 1})
	queued, open := handRun(t, q, clock, log, true, 0, names(10)...)
	if queued == 10 {
		t.Fatal("no hand taken: the test tests nothing")
	}
	closed := make(chan struct{})
	go func() { q.Close(); close(closed) }()
	waitFor(t, "the queue closed", func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return q.closed
	})
	open()
	<-closed
	if got, want := log.ran(), append([]string{"blocker", "gate"}, names(10)...); !slices.Equal(got, want) {
		t.Fatalf("served %v before Close returned, want %v", got, want)
	}
}

// TestAWorkerWarmsItsHand: a worker that takes a hand warms it before it
// serves any of it (Config.Warm), the query taken with it (the gate)
// included: warmPasses passes over them all, in the hand's order, each
// query once a pass, so that each query's steps are on their way with the
// others'. A query taken alone (the blocker, behind nothing) is not
// warmed.
func TestAWorkerWarmsItsHand(t *testing.T) {
	log, _ := warmAHand(t, func(string, int) bool { return true })
	var want []string
	for range warmPasses {
		for _, name := range append([]string{"gate"}, names(handMax-1)...) {
			want = append(want, "warm "+name)
		}
	}
	want = append(append([]string{"blocker"}, want...), "gate")
	want = append(want, names(handMax-1)...)
	if got := log.ran(); !slices.Equal(got, want) {
		t.Fatalf("ran and warmed\n%v\nwant\n%v", got, want)
	}
}

// TestWarmingStopsWhenNothingIsLeft: a pass after which no query of the
// hand has more to warm (Config.Warm's more: a query whose answer is
// kept is warmed in three steps, a looked-up one in nine) is the last.
func TestWarmingStopsWhenNothingIsLeft(t *testing.T) {
	log, warmed := warmAHand(t, func(name string, n int) bool { return name == "1" && n < 3 }) // 1 has three steps, the rest one
	passes := 0
	for _, e := range log.ran() {
		if e == "warm gate" {
			passes++
		}
	}
	if passes != 3 || warmed["1"] != 3 || warmed["gate"] != 3 {
		t.Fatalf("%d passes, 1 warmed %d times, gate %d; want 3 passes, the last one after which nothing had more", passes, warmed["1"], warmed["gate"])
	}
}

// warmAHand runs a blocker, then the gate and a hand behind it, on one
// worker whose Warm logs each call and reports more as more says of the
// query's name and the times it has been warmed; it returns once all are
// served, with the log and how many times each was warmed.
func warmAHand(t *testing.T, more func(name string, warmed int) bool) (*events, map[string]int) {
	var log *events
	warmed := map[string]int{}
	warm := func(tk Task) bool {
		var name string
		switch tk := tk.(type) {
		case computing:
			name = tk.name
		case *task:
			name = tk.name
		}
		log.mu.Lock()
		defer log.mu.Unlock()
		log.runs = append(log.runs, "warm "+name)
		warmed[name]++
		return more(name, warmed[name])
	}
	q, clock, l := handQueue(t, Config{Workers: 1, Warm: warm})
	log = l
	_, open := handRun(t, q, clock, log, true, 0, names(handMax-1)...)
	open()
	waitFor(t, "all served", func() bool {
		served := 0
		for _, e := range log.ran() {
			if !strings.HasPrefix(e, "warm ") {
				served++
			}
		}
		return served == 2+handMax-1
	})
	log.mu.Lock()
	defer log.mu.Unlock()
	return log, maps.Clone(warmed)
}

// TestAWarmThatPanicsIsCounted: a Warm that panics costs the worker
// nothing but the warming: every query is served, and the panics counted.
func TestAWarmThatPanicsIsCounted(t *testing.T) {
	q, clock, log := handQueue(t, Config{Workers: 1, Warm: func(Task) bool { panic("warm") }})
	_, open := handRun(t, q, clock, log, true, 0, names(handMax-1)...)
	open()
	waitFor(t, "all served", func() bool { return len(log.ran()) == 2+handMax-1 })
	if st := q.Stats(); st.Panics == 0 || st.Served != 2+handMax-1 {
		t.Fatalf("stats %+v: want every query served and the warm's panics counted", st)
	}
}
