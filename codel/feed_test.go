package codel

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
)

// TestFeedWhenEmptiedOrDue: a worker feeds before its next query once it
// has taken the last queued one; while queries stay queued it feeds only
// once feedEvery has passed since it last did, so that the system call
// that mostly finds the socket empty is not made for every query, and no
// query stays unread in the socket for longer than that.
func TestFeedWhenEmptiedOrDue(t *testing.T) {
	for _, c := range []struct {
		name    string
		advance int64 // the clock moves this much as each task runs
		min     int   // feeds at least, for the 20 queued tasks
		max     int
	}{
		{"clock still: only once the queue is empty", 0, 1, 3},
		{"clock moving past feedEvery each task: every time", feedEvery, 20, 22},
		{"clock moving half of feedEvery each task, a hand held: every other time", feedEvery / 2, 10, 12},
	} {
		t.Run(c.name, func(t *testing.T) {
			clock := newFake(1_000_000)
			var feeds atomic.Int64
			q := New(Config{Workers: 1, FIFO: true, Clock: clock.now, Feed: func(int, Source) { feeds.Add(1) }})
			// Computing tasks: the worker may take them in a hand, and
			// feeds on time all the same.
			defer q.Close()
			log := newEvents()
			release := blockWorker(t, q, log, clock.now())
			before := feeds.Load()
			for i := range 20 {
				q.Submit(computing{&task{name: fmt.Sprint(i), log: log, clock: clock, advance: c.advance}}, clock.now())
			}
			release()
			waitFor(t, "the 20 tasks", func() bool { return len(log.ran()) == 21 })
			if n := int(feeds.Load() - before); n < c.min || n > c.max {
				t.Fatalf("%d feeds for 20 queued tasks, want %d to %d", n, c.min, c.max)
			}
		})
	}
}

// TestOneFeedBeforeParking: a worker that has just fed and finds the queue
// empty lets its Local go and parks, without feeding again: one feed for
// each time it runs out of work, the first when it starts.
func TestOneFeedBeforeParking(t *testing.T) {
	var mu sync.Mutex
	var flushes [][]string
	var feeds atomic.Int64
	q := New(Config{Workers: 1, Feed: func(int, Source) { feeds.Add(1) }, Local: func() Local { return &held{mu: &mu, flushes: &flushes} }})
	defer q.Close()
	parked := func() bool {
		q.mu.Lock()
		defer q.mu.Unlock()
		return len(q.idle) == 1
	}
	waitFor(t, "the worker to park", parked)
	if n := feeds.Load(); n != 1 {
		t.Fatalf("%d feeds before the worker first parked, want 1", n)
	}
	for i := range 3 {
		q.Submit(&localTask{name: fmt.Sprint(i)}, Now())
		waitFor(t, "the task's answer to go", func() bool {
			mu.Lock()
			defer mu.Unlock()
			return len(flushes) == i+1
		})
		waitFor(t, "the worker to park again", parked)
		if n := feeds.Load(); n != int64(i+2) {
			t.Fatalf("%d feeds after %d tasks, each run by an idle worker; want %d", n, i+1, i+2)
		}
	}
}

// TestFeedTurns: each worker's feeds count its turns, one more each time,
// from a number of its own, so that a caller with several sockets reads
// them in turn and the workers start on different ones.
func TestFeedTurns(t *testing.T) {
	var mu sync.Mutex
	var turns []int
	feed := func(turn int, _ Source) {
		mu.Lock()
		turns = append(turns, turn)
		mu.Unlock()
	}
	seen := func() []int {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(turns)
	}
	parked := func(q *Queue, n int) func() bool {
		return func() bool {
			q.mu.Lock()
			defer q.mu.Unlock()
			return len(q.idle) == n
		}
	}
	q := New(Config{Workers: 3, Feed: feed})
	waitFor(t, "the workers to park", parked(q, 3))
	if got := seen(); len(got) != 3 || got[0] == got[1] || got[1] == got[2] || got[0] == got[2] {
		t.Fatalf("the three workers' first feeds had turns %v, want three different ones", got)
	}
	q.Close()

	mu.Lock()
	turns = nil
	mu.Unlock()
	q = New(Config{Workers: 1, Feed: feed})
	defer q.Close()
	for i := range 5 {
		waitFor(t, "the worker to park", parked(q, 1))
		q.Submit(&task{name: fmt.Sprint(i), log: newEvents()}, Now())
		waitFor(t, "it to feed after the task", func() bool { return len(seen()) == i+2 })
	}
	if got := seen(); !slices.Equal(got, []int{0, 1, 2, 3, 4, 5}) {
		t.Errorf("one worker's turns %v, want 0 to 5: one more each feed", got)
	}
}
