package codel

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ontimedns/ontime/codel"
)

// TestCountsOutliveTheirInstance: a reload stops a server's codel and
// starts another under the same server label. The counters go on from
// where the stopped one left them, what it dropped as it stopped
// included, counted once; the workers are the running ones'. Forgetting
// the stopped instance's counts fails it, as does keeping them twice.
func TestCountsOutliveTheirInstance(t *testing.T) {
	r := newRegistry()
	const server = "dns://:53"
	instance := func() *Codel {
		c := &Codel{server: server, now: codel.Now}
		c.q = codel.New(codel.Config{Workers: 1})
		r.add(c)
		return c
	}
	old := instance()
	for range 3 {
		old.q.Refused(codel.Malformed)
	}
	next := instance()
	next.q.Refused(codel.Malformed)
	if got := collected(t, r, dropsDesc, server, "malformed"); got != 4 {
		t.Fatalf("two running instances: %v malformed drops, want 4", got)
	}

	// The old one's last drop comes as it stops, after the scrape above.
	old.q.Refused(codel.Malformed)
	old.stop()
	r.remove(old)
	r.remove(old) // removed once: counted once
	if got := collected(t, r, dropsDesc, server, "malformed"); got != 5 {
		t.Errorf("after the old instance stopped: %v malformed drops, want 5", got)
	}
	if got := collected(t, r, workersDesc, server, ""); got != 1 {
		t.Errorf("after the old instance stopped: %v workers, want the running one's 1", got)
	}

	next.stop()
	r.remove(next)
	if got := collected(t, r, dropsDesc, server, "malformed"); got != 5 {
		t.Errorf("with no instance running: %v malformed drops, want 5", got)
	}
	if got := collected(t, r, workersDesc, server, ""); got != 0 {
		t.Errorf("with no instance running: %v workers, want 0", got)
	}
}

// TestCountsOfAWorkerLeftBehind: a stopped instance's Close waits for its
// workers only up to the deadline. One still at work then (here, in a
// query that blocks) drops what waited behind it once it comes back: the
// drops are counted, though the instance was removed before they came.
// Kept when it was removed, they were lost.
func TestCountsOfAWorkerLeftBehind(t *testing.T) {
	r := newRegistry()
	const server = "dns://:53"
	c := &Codel{server: server, now: codel.Now}
	c.q = codel.New(codel.Config{Workers: 1, MaxWorkers: 1, Deadline: 20 * time.Millisecond})
	r.add(c)
	release, running := make(chan struct{}), make(chan struct{})
	c.q.Submit(blockingTask{running, release}, codel.Now())
	<-running
	const behind = 5
	for range behind {
		c.q.Submit(blockingTask{}, codel.Now())
	}
	c.stop() // returns after the deadline, the worker still blocked
	r.remove(c)
	close(release)
	<-c.q.Exited()
	drops := func() float64 {
		n := 0.0
		for _, reason := range codel.Reasons {
			n += collected(t, r, dropsDesc, server, reason.String())
		}
		return n
	}
	for try := 0; drops() != behind && try < 100; try++ {
		time.Sleep(10 * time.Millisecond) // kept by the remover's goroutine
	}
	if got := drops(); got != behind {
		t.Errorf("%v drops after the worker left behind came back, want the %d queries that waited behind it", got, behind)
	}
}

// blockingTask signals running, then blocks until release; a nil one
// returns at once.
type blockingTask struct{ running, release chan struct{} }

func (b blockingTask) Run() {
	if b.release != nil {
		close(b.running)
		<-b.release
	}
}

func (blockingTask) Drop(codel.Reason) {}

// collected returns the value r reports for desc's metric of server (and
// reason, where not empty), failing the test where it reports none.
func collected(t *testing.T, r *registry, desc *prometheus.Desc, server, reason string) float64 {
	t.Helper()
	ch := make(chan prometheus.Metric, 64)
	go func() { r.Collect(ch); close(ch) }()
	var value float64
	found := false
	for m := range ch {
		if m.Desc() != desc {
			continue
		}
		var d dto.Metric
		if err := m.Write(&d); err != nil {
			t.Fatal(err)
		}
		labels := map[string]string{}
		for _, l := range d.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		if labels["server"] != server || labels["reason"] != reason {
			continue
		}
		value, found = d.GetCounter().GetValue()+d.GetGauge().GetValue(), true
	}
	if !found {
		t.Fatalf("no %s for server %q, reason %q", desc, server, reason)
	}
	return value
}
