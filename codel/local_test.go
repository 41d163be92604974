package codel

import (
	"slices"
	"sync"
	"testing"
)

// held is a worker's Local that records what its tasks left in it and
// what each Flush let go.
type held struct {
	mu      *sync.Mutex
	flushes *[][]string
	pending []string
}

func (h *held) Flush() {
	if len(h.pending) == 0 {
		return
	}
	h.mu.Lock()
	*h.flushes = append(*h.flushes, h.pending)
	h.mu.Unlock()
	h.pending = nil
}

// localTask leaves its name in the worker's Local.
type localTask struct {
	name    string
	gate    chan struct{} // RunLocal waits on it, if set
	started chan struct{}
}

func (t *localTask) Run() { panic("a LocalTask runs with RunLocal") }
func (t *localTask) RunLocal(l Local, _ int64) {
	if t.started != nil {
		close(t.started)
	}
	if t.gate != nil {
		<-t.gate
	}
	h := l.(*held)
	h.pending = append(h.pending, t.name)
}
func (t *localTask) Drop(Reason) {}

// TestLocalHeldWhileTasksAreQueued: what a worker's tasks leave in its
// Local goes out together once the worker finds the queue empty, not
// before each task while a few are queued (a task that may block flushes
// it itself).
func TestLocalHeldWhileTasksAreQueued(t *testing.T) {
	var mu sync.Mutex
	var flushes [][]string
	q := New(Config{Workers: 1, FIFO: true, Local: func() Local { return &held{mu: &mu, flushes: &flushes} }})
	defer q.Close()

	first := &localTask{name: "a", gate: make(chan struct{}), started: make(chan struct{})}
	q.Submit(first, Now())
	<-first.started // the one worker is busy: the next ones queue behind it
	names := []string{"b", "c", "d", "e", "f", "g", "h", "i", "j", "k", "l", "m"}
	for _, name := range names {
		q.Submit(&localTask{name: name}, Now())
	}
	close(first.gate)
	waitFor(t, "every task flushed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		n := 0
		for _, f := range flushes {
			n += len(f)
		}
		return n == 13
	})
	mu.Lock()
	got := flushes
	mu.Unlock()
	want := [][]string{append([]string{"a"}, names...)}
	if !slices.EqualFunc(got, want, slices.Equal) {
		t.Fatalf("flushes = %v, want %v", got, want)
	}

	// An idle worker holds nothing: one more task goes out on its own.
	q.Submit(&localTask{name: "n"}, Now())
	waitFor(t, "the lone task to be flushed", func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(flushes) == len(want)+1
	})
	if got := flushes[len(want)]; !slices.Equal(got, []string{"n"}) {
		t.Fatalf("last flush = %v, want [n]", got)
	}
}

// TestLocalFlushedOnClose: a worker that exits lets go of what it held.
func TestLocalFlushedOnClose(t *testing.T) {
	var mu sync.Mutex
	var flushes [][]string
	q := New(Config{Workers: 1, Local: func() Local { return &held{mu: &mu, flushes: &flushes} }})
	gate := make(chan struct{})
	started := make(chan struct{})
	q.Submit(&localTask{name: "a", gate: gate, started: started}, Now())
	<-started
	done := make(chan struct{})
	go func() { q.Close(); close(done) }()
	close(gate)
	<-done
	mu.Lock()
	defer mu.Unlock()
	if len(flushes) != 1 || !slices.Equal(flushes[0], []string{"a"}) {
		t.Fatalf("flushes = %v, want [[a]]", flushes)
	}
}

// TestPlainTasksRunWithLocalSet: a Task that is not a LocalTask still runs.
func TestPlainTasksRunWithLocalSet(t *testing.T) {
	var mu sync.Mutex
	var flushes [][]string
	q := New(Config{Workers: 1, Local: func() Local { return &held{mu: &mu, flushes: &flushes} }})
	defer q.Close()
	log := newEvents()
	q.Submit(&task{name: "plain", log: log}, Now())
	waitFor(t, "the plain task to run", func() bool { return len(log.ran()) == 1 })
}
