// Package gcpace gives the Go garbage collector a floor of heap headroom.
//
// Go collects when the heap has grown by GOGC percent of what the last
// collection left live. A DNS server's live heap is mostly its zones, and
// its queries allocate a little each: with the default 100%, a 40 MB zone
// is marked again every 40 MB of queries, about once a second at 20,000
// queries a second on one core, and every query that arrives while the
// collector marks waits behind it (p99 15 to 24 ms instead of 1.4 to 4 ms
// with GOGC=400; bench/README.md). The cost of marking is set by the live
// heap, so what should be fixed is how often it happens: the headroom in
// bytes, not in percent of a heap that may be 40 MB or 40 GB.
//
// Run sets GOGC, every few seconds, to what gives at least Headroom bytes
// above the live heap, never below 100% (the default: large heaps keep
// Go's own pacing and memory bound) and never above 1000%. An operator
// who sets GOGC has chosen already: Run leaves the runtime alone then. A
// memory limit (GOMEMLIMIT) goes well with it: the collector runs earlier
// as the heap nears the limit, whatever GOGC is.
package gcpace

import (
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

const (
	minPercent = 100
	maxPercent = 1000
	every      = 5 * time.Second
)

// Percent returns the GOGC that leaves headroom bytes above a live heap
// of live bytes, within [100, 1000].
func Percent(live, headroom uint64) int {
	if live == 0 {
		return maxPercent
	}
	p := headroom * 100 / live
	return int(min(max(p, minPercent), maxPercent))
}

var (
	mu    sync.Mutex
	held  int // Hold calls not yet released: the pace is someone else's
	setTo int // what Run last set, 0 before it did
)

// Hold stops Run from changing GOGC until the returned function is called:
// for a caller that sets it for a while itself (a bulk zone load, which
// collects often on purpose).
func Hold() (release func()) {
	mu.Lock()
	held++
	mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			mu.Lock()
			held--
			mu.Unlock()
		})
	}
}

// Chosen reports whether the operator set GOGC.
func Chosen() bool { return os.Getenv("GOGC") != "" }

// Run keeps GOGC at Percent(live heap, headroom) until stop is closed. It
// returns at once if the operator chose the pace (Chosen) or headroom is 0.
func Run(headroom uint64, stop <-chan struct{}) {
	if headroom == 0 || Chosen() {
		return
	}
	sample := newSample()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		pace(sample, headroom)
		select {
		case <-stop:
			return
		case <-t.C:
		}
	}
}

func newSample() []metrics.Sample { return []metrics.Sample{{Name: "/gc/heap/live:bytes"}} }

// pace sets GOGC once, from the live heap.
func pace(sample []metrics.Sample, headroom uint64) {
	metrics.Read(sample)
	if sample[0].Value.Kind() != metrics.KindUint64 {
		return
	}
	p := Percent(sample[0].Value.Uint64(), headroom)
	mu.Lock()
	defer mu.Unlock()
	if held > 0 || p == setTo {
		return
	}
	debug.SetGCPercent(p)
	setTo = p
}
