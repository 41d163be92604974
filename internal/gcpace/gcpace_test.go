package gcpace

import (
	"runtime/debug"
	"testing"
	"time"
)

func TestPercent(t *testing.T) {
	const mb = 1 << 20
	for _, c := range []struct {
		live, headroom uint64
		want           int
	}{
		{40 * mb, 256 * mb, 640},  // a small zone: collected every 256 MB, not every 40
		{10 * mb, 256 * mb, 1000}, // tiny: capped
		{0, 256 * mb, 1000},
		{256 * mb, 256 * mb, 100},  // as large as the headroom: Go's own default
		{4096 * mb, 256 * mb, 100}, // large heaps keep Go's pacing and memory bound
		{100 * mb, 150 * mb, 150},
	} {
		if got := Percent(c.live, c.headroom); got != c.want {
			t.Errorf("Percent(%d MB, %d MB) = %d, want %d", c.live/mb, c.headroom/mb, got, c.want)
		}
	}
}

// TestRunSetsThePaceUnlessHeld: Run sets GOGC from the live heap, and
// leaves it alone while a caller holds it.
func TestRunSetsThePaceUnlessHeld(t *testing.T) {
	if Chosen() {
		t.Skip("GOGC is set: Run leaves the runtime alone")
	}
	defer debug.SetGCPercent(debug.SetGCPercent(100))
	mu.Lock()
	setTo = 0
	mu.Unlock()
	release := Hold()
	debug.SetGCPercent(50)
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() { Run(1<<40, stop); close(done) }() // a huge headroom: 1000%
	time.Sleep(100 * time.Millisecond)            // its first pace, at once
	if got := debug.SetGCPercent(50); got != 50 {
		t.Fatalf("GOGC changed to %d while held", got)
	}
	release()
	pace(newSample(), 1<<40) // as Run's next tick would
	if got := debug.SetGCPercent(100); got != maxPercent {
		t.Fatalf("GOGC = %d after release, want %d", got, maxPercent)
	}
	close(stop)
	<-done
}
