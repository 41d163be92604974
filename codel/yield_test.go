package codel

import (
	"runtime"
	"slices"
	"testing"
	"time"
)

// spawning starts a goroutine that logs "other" as it runs.
type spawning struct{ *task }

func (s spawning) Run() {
	go func() {
		s.log.mu.Lock()
		s.log.runs = append(s.log.runs, "other")
		s.log.mu.Unlock()
	}()
	s.task.Run()
}

// TestAWorkerLetsItsPRunOthersBetweenTasks: a worker that has run for
// yieldAfter lets the other goroutines of its P run before its next task,
// rather than running on until the runtime preempts it inside one (with
// what the task holds: a P's replay cache). On one P, a goroutine started
// by the first task runs after the third (or, where the scheduler took
// the worker back first, as it does now and then, at a later yield), each
// task 1 ms on the queue's clock; without the yield it ran once the queue
// was empty.
func TestAWorkerLetsItsPRunOthersBetweenTasks(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	clock := newFake(1)
	q := New(Config{Workers: 1, FIFO: true, Clock: clock.now, Deadline: time.Second})
	defer q.Close()
	log := newEvents()
	step := int64(time.Millisecond)
	var ts []Arrived
	for i, name := range names(10) {
		tk := &task{name: name, log: log, clock: clock, advance: step}
		var run Task = tk
		if i == 0 {
			run = spawning{tk}
		}
		ts = append(ts, Arrived{Task: run, Arrival: clock.now()})
	}
	q.SubmitAll(ts)
	waitFor(t, "every task and the goroutine to run", func() bool { return len(log.ran()) == 11 })
	got := log.ran()
	at := slices.Index(got, "other")
	if first := int(yieldAfter/step) + 1; at < first || at == len(got)-1 {
		t.Fatalf("ran %v: the goroutine the first task started ran at %d, want it from %d on (after the task that found the worker %v in), before the last", got, at, first, time.Duration(yieldAfter))
	}
}
