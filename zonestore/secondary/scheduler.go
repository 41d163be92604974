package secondary

import (
	"math/rand/v2"
	"sync"
	"time"
)

// A goroutine a zone, each asleep on its own timer, made every secondary
// zone cost a goroutine's stack for nothing most of its life, and let
// every zone refresh at once: a catalog of 10,000 members, read at start,
// sent its primary 10,000 transfers in the same instant, and a primary
// that came back after an outage met every zone's retry together.
// Knot and BIND run refreshes off a queue, on a few workers (BIND's
// transfers-in, 10 by default). So does the Scheduler: a zone waits on a
// runtime timer (no goroutine), which puts it on one queue when it is due;
// a fixed number of workers take zones off the queue in order and refresh
// them one at a time. The SOA expire fires on the same timer, on time
// however long the queue is: a zone's expiry never waits behind other
// zones' transfers. (Two timers a zone, one for each, were 23 MB of a
// catalog's 100,000 members: bench/README.md, 2026-12-07.) A refresh is
// scheduled at its interval less up to a tenth, at random, so zones that
// refreshed together drift apart.

// Scheduler refreshes the zones added to it on a fixed number of workers.
type Scheduler struct {
	mu     sync.Mutex
	queue  []*Zone // due, in the order they came due
	zones  map[*Zone]struct{}
	ready  chan struct{} // a hint: the queue may hold a zone
	stop   chan struct{}
	closed bool
	// the primaries that did not answer, not asked again for a while
	// (unreachable.go)
	unreach unreachable
}

// slot is a zone's place in its Scheduler, under the Scheduler's lock.
type slot struct {
	sched *Scheduler
	timer *time.Timer // at the first of refreshAt and expireAt (fire)
	// refreshAt is when the next refresh queues the zone, expireAt when
	// the SOA expire since the last good refresh passes: since epoch
	// (monotonic), 0 for none.
	refreshAt, expireAt time.Duration
	queued              bool
	busy                bool // a worker is refreshing it
	again               bool // notified while busy: queued again when done
	removed             bool
	backoff             time.Duration // before a first version, the wait after the last try: its worker's alone, not under the lock
}

// NewScheduler starts workers (at least one) that refresh zones as they
// come due.
func NewScheduler(workers int) *Scheduler {
	q := &Scheduler{zones: map[*Zone]struct{}{}, ready: make(chan struct{}, 1), stop: make(chan struct{}), unreach: unreachable{now: time.Now}}
	for range max(workers, 1) {
		go q.work()
	}
	return q
}

// Add schedules z: refreshed at once, then at the SOA's timers and on
// Notify, until Remove. Its saved copy, if it has one and holds no version
// yet, is loaded here, before its first turn: behind primaries that do
// not answer, each turn may hold a worker for the query's timeout, and a
// copy loaded on a worker would wait for them, unserved.
func (q *Scheduler) Add(z *Zone) {
	if z.file != "" && z.cfg.Store.Get(z.origin) == nil {
		z.restore()
	}
	q.mu.Lock()
	if q.closed || z.slot.sched != nil {
		q.mu.Unlock()
		return
	}
	z.slot = slot{sched: q, backoff: firstRetry}
	z.sched.Store(q)
	z.slot.timer = time.AfterFunc(time.Hour, func() { q.fire(z) })
	z.slot.timer.Stop()
	q.zones[z] = struct{}{}
	q.enqueue(z)
	q.mu.Unlock()
	z.armExpiry() // for a version held already, restored or carried
}

// Remove stops refreshing z. A refresh under way finishes, and publishes
// and saves nothing: once Remove returns, z's origin may be another
// zone's, or none.
func (q *Scheduler) Remove(z *Zone) {
	q.mu.Lock()
	removed := q.remove(z)
	q.mu.Unlock()
	if removed {
		z.retire() // off the lock: it waits for a copy being written
	}
}

func (q *Scheduler) remove(z *Zone) bool {
	if z.slot.sched != q || z.slot.removed {
		return false
	}
	z.slot.removed = true
	z.slot.timer.Stop()
	delete(q.zones, z)
	return true
}

// Stop removes every zone and stops the workers. It does not wait for the
// refreshes under way (a transfer may take long): each finishes, and
// publishes nothing, as after Remove (a Corefile reload's zones, which
// take the old ones' places, refresh at once).
func (q *Scheduler) Stop() {
	for _, z := range q.close() {
		z.retire() // off the lock, as in Remove
	}
}

// close marks q closed, removes every zone and stops the workers; it
// returns the zones removed.
func (q *Scheduler) close() []*Zone {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return nil
	}
	q.closed = true
	var removed []*Zone
	for z := range q.zones {
		if q.remove(z) {
			removed = append(removed, z)
		}
	}
	q.queue = nil
	close(q.stop)
	return removed
}

// Unreachable returns the primaries not asked for now, for they did not
// answer (unreachable.go).
func (q *Scheduler) Unreachable() []string { return q.unreach.heldNow() }

// Queued returns how many zones are due and waiting for a worker.
func (q *Scheduler) Queued() int {
	q.mu.Lock()
	defer q.mu.Unlock()
	return len(q.queue)
}

// epoch is the origin of the slots' times: durations since it are
// monotonic, as the timers are, where a wall clock set back would hold a
// refresh that is due.
var epoch = time.Now()

// fire is the timer's: z's refresh is due (it is queued, unless a worker
// has it already), or its expire, or both.
func (q *Scheduler) fire(z *Zone) {
	q.mu.Lock()
	if z.slot.removed {
		q.mu.Unlock()
		return
	}
	now := time.Since(epoch)
	if at := z.slot.refreshAt; at != 0 && at <= now {
		z.slot.refreshAt = 0
		if !z.slot.busy {
			q.enqueue(z)
		}
	}
	expire := false
	if at := z.slot.expireAt; at != 0 && at <= now {
		z.slot.expireAt, expire = 0, true
	}
	q.arm(z)
	q.mu.Unlock()
	if expire {
		z.expire()
	}
}

// arm sets z's timer for the first of its refresh and its expire, or
// stops it where neither is set. Under q.mu.
func (q *Scheduler) arm(z *Zone) {
	next := z.slot.refreshAt
	if e := z.slot.expireAt; e != 0 && (next == 0 || e < next) {
		next = e
	}
	if next == 0 {
		z.slot.timer.Stop()
		return
	}
	z.slot.timer.Reset(max(next-time.Since(epoch), 0))
}

// expireIn has z's expire checked in d (Zone.expire), on the zone's
// timer, unless it was removed.
func (q *Scheduler) expireIn(z *Zone, d time.Duration) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !z.slot.removed {
		z.slot.expireAt = time.Since(epoch) + d
		q.arm(z)
	}
}

// notify refreshes z as soon as a worker is free: now, or once the
// refresh under way has finished.
func (q *Scheduler) notify(z *Zone) {
	q.mu.Lock()
	defer q.mu.Unlock()
	switch {
	case z.slot.removed:
	case z.slot.busy:
		z.slot.again = true
	default:
		z.slot.refreshAt = 0
		q.arm(z)
		q.enqueue(z)
	}
}

// enqueue puts z on the queue, once.
func (q *Scheduler) enqueue(z *Zone) {
	if z.slot.queued || q.closed {
		return
	}
	z.slot.queued = true
	q.queue = append(q.queue, z)
	select {
	case q.ready <- struct{}{}:
	default:
	}
}

// next takes the first zone of the queue that is still scheduled, and
// marks it busy; nil when the queue is empty.
func (q *Scheduler) next() *Zone {
	q.mu.Lock()
	defer q.mu.Unlock()
	for len(q.queue) > 0 {
		z := q.queue[0]
		q.queue[0] = nil
		q.queue = q.queue[1:]
		z.slot.queued = false
		if z.slot.removed {
			continue
		}
		z.slot.busy = true
		if len(q.queue) > 0 { // for another worker
			select {
			case q.ready <- struct{}{}:
			default:
			}
		}
		return z
	}
	q.queue = nil // let the backing array go
	return nil
}

func (q *Scheduler) work() {
	for {
		z := q.next()
		if z == nil {
			select {
			case <-q.ready:
				continue
			case <-q.stop:
				return
			}
		}
		wait := z.step()
		q.mu.Lock()
		z.slot.busy = false
		switch {
		case z.slot.removed:
		case z.slot.again:
			z.slot.again = false
			q.enqueue(z)
		default:
			z.slot.refreshAt = time.Since(epoch) + jitter(wait)
			q.arm(z)
		}
		q.mu.Unlock()
	}
}

// jitter is d less up to a tenth of it, at random.
func jitter(d time.Duration) time.Duration {
	if d < 10*time.Second {
		return d
	}
	return d - rand.N(d/10)
}
