// Package yield lets long background work (re-reading a 170,000-name zone
// file) share a CPU with the queries without making them wait.
//
// Go's scheduler looks for goroutines whose sockets became ready (the
// network poller) only when a P has nothing else to run, or from sysmon
// once 10 ms have passed without a look. A goroutine that computes for a
// second therefore keeps every query that arrives meanwhile unread for up
// to 10 ms: the tail of bench/swap.sh. runtime.Gosched does not help: the
// yielding goroutine goes to the global run queue, which the scheduler
// takes before it polls the network.
//
// A Pacer's Tick, called often from the work, parks the goroutine for a
// few microseconds once it has computed for a slice of time. Parked, it
// leaves the P with nothing to run, so the scheduler polls the network
// and runs the queries that arrived; the goroutine comes back when they
// are done. On Linux the park is a read of a timerfd that the poller
// watches, so waking costs microseconds, not the millisecond a timer's
// epoll wait is rounded to; elsewhere it is a short time.Sleep.
package yield

import "time"

const (
	// Slice is how long work computes between yields: what a query that
	// arrives meanwhile may wait behind it.
	Slice = 200 * time.Microsecond
	// nap is how long a yield parks when no query is waiting: long
	// enough that the timer has not fired before the goroutine parks
	// (the kernel's timer slack makes a park about 50 µs anyway).
	nap = 50 * time.Microsecond
	// checkEvery is how many Ticks pass between readings of the clock.
	checkEvery = 32
)

// A Pacer paces one goroutine's work; its zero value is ready. It holds a
// file descriptor once it has yielded: Close releases it.
type Pacer struct {
	since time.Time // the start of the slice now running
	ticks int
	park  parker
}

// Tick is called for each small piece of work (a record read, a name
// compared); it yields when a slice has run.
func (p *Pacer) Tick() {
	if p == nil {
		return
	}
	p.ticks++
	if p.ticks%checkEvery != 0 {
		return
	}
	now := time.Now()
	if p.since.IsZero() {
		p.since = now
		return
	}
	if now.Sub(p.since) < Slice {
		return
	}
	p.park.park(nap)
	p.since = time.Now()
}

// Close releases what the Pacer holds. It may Tick again afterwards.
func (p *Pacer) Close() {
	if p != nil {
		p.park.close()
	}
}
