package codel

import (
	"math"
	"testing"
	"time"
)

const (
	ms       = int64(time.Millisecond)
	target   = 5 * ms
	interval = 100 * ms
)

func newController() *Controller { return &Controller{Target: target, Interval: interval} }

// run asks the controller about a head query every step from t0 to t1,
// the sojourn given by soj(now), with a backlog of 10, and returns the
// times at which it said drop.
func run(c *Controller, t0, t1, step int64, soj func(now int64) int64) []int64 {
	var drops []int64
	for now := t0; now <= t1; now += step {
		if c.Drop(now, soj(now), 10) {
			drops = append(drops, now)
		}
	}
	return drops
}

func constant(d int64) func(int64) int64 { return func(int64) int64 { return d } }

func TestBelowTargetNeverDrops(t *testing.T) {
	c := newController()
	if d := run(c, 1, 10_000*ms, ms, constant(target-1)); len(d) != 0 || c.Congested() {
		t.Fatalf("dropped at %v with the sojourn below target", d)
	}
}

func TestAboveTargetForLessThanAnIntervalDoesNotDrop(t *testing.T) {
	c := newController()
	// Above target for 99 ms, then below for 1 ms, and again: never a
	// whole interval above (RFC 8289 section 4.2: a burst is not a queue).
	soj := func(now int64) int64 {
		if now%(100*ms) == 0 {
			return ms
		}
		return 50 * ms
	}
	if d := run(c, 1*ms, 5000*ms, ms, soj); len(d) != 0 {
		t.Fatalf("dropped at %v; the sojourn never stayed above target for an interval", d)
	}
}

func TestFirstDropAfterOneIntervalThenFasterByInverseSqrt(t *testing.T) {
	c := newController()
	start := 1 * ms
	drops := run(c, start, start+2000*ms, ms/10, constant(20*ms))
	if len(drops) < 10 {
		t.Fatalf("only %d drops in 2 s above target", len(drops))
	}
	if drops[0] != start+interval {
		t.Fatalf("first drop at %v, want one interval after the sojourn went above target (%v)", drops[0], start+interval)
	}
	// The n-th gap is interval/sqrt(n), to the step of the simulated clock.
	for n := 1; n < len(drops); n++ {
		want := float64(interval) / math.Sqrt(float64(n))
		got := float64(drops[n] - drops[n-1])
		if math.Abs(got-want) > float64(ms/10) {
			t.Fatalf("gap %d is %.2f ms, want interval/sqrt(%d) = %.2f ms", n, got/1e6, n, want/1e6)
		}
	}
	if !c.Dropping() {
		t.Fatal("not in the dropping state")
	}
}

func TestLeavesDroppingWhenSojournFallsBelowTarget(t *testing.T) {
	c := newController()
	run(c, 1*ms, 500*ms, ms, constant(20*ms))
	if !c.Dropping() {
		t.Fatal("not dropping after 500 ms above target")
	}
	if c.Drop(501*ms, target/2, 10) || c.Dropping() || c.Congested() {
		t.Fatal("a sojourn below target must end the dropping state without a drop")
	}
}

func TestBacklogOfOneIsNotAQueue(t *testing.T) {
	c := newController()
	for now := 1 * ms; now < 1000*ms; now += ms {
		if c.Drop(now, 50*ms, 1) {
			t.Fatalf("dropped the only queued query at %v", now)
		}
	}
}

// TestReentryKeepsTheDropRate: re-entering the dropping state soon after
// leaving it starts from the count that was controlling the queue (RFC
// 8289 section 5.5: count = count - lastcount when that is more than 1),
// not from 1; long after, it starts again from 1.
func TestReentryKeepsTheDropRate(t *testing.T) {
	c := newController()
	drops := run(c, 1*ms, 1000*ms, ms/10, constant(20*ms))
	countBefore := len(drops) // count since entry, which set lastCount = 1
	c.Drop(1001*ms, ms, 10)   // below target: leave
	if c.Dropping() {
		t.Fatal("still dropping")
	}
	// Above target again: one interval later dropping is re-entered.
	again := run(c, 1002*ms, 1400*ms, ms/10, constant(20*ms))
	if len(again) < 2 {
		t.Fatalf("%d drops after re-entry", len(again))
	}
	wantCount := countBefore - 1
	if wantCount <= 1 {
		t.Fatalf("test needs more drops before leaving (count %d)", countBefore)
	}
	want := float64(interval) / math.Sqrt(float64(wantCount))
	if got := float64(again[1] - again[0]); math.Abs(got-want) > float64(ms/10) {
		t.Fatalf("first gap after re-entry %.2f ms, want interval/sqrt(%d) = %.2f ms", got/1e6, wantCount, want/1e6)
	}

	// Long after (more than 16 intervals past the last drop_next), count starts at 1.
	c2 := newController()
	run(c2, 1*ms, 1000*ms, ms/10, constant(20*ms))
	c2.Drop(1001*ms, ms, 10)
	late := run(c2, 4000*ms, 4400*ms, ms/10, constant(20*ms))
	if got := late[1] - late[0]; got != interval {
		t.Fatalf("first gap after a late re-entry %v, want a whole interval", time.Duration(got))
	}
}

func TestEmptyQueueResets(t *testing.T) {
	c := newController()
	run(c, 1*ms, 500*ms, ms, constant(20*ms))
	c.Empty()
	if c.Dropping() || c.Congested() {
		t.Fatal("an empty queue leaves no standing delay")
	}
}
