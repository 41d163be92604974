package codel

// An attendant is a worker that waits on a source of tasks (a socket) where
// the others park, and queues what arrives there itself (Attend). At a
// light load a query then readies one goroutine, the attendant woken by
// its arrival, instead of two: a reader woken by it, then the worker the
// reader wakes. On two CPUs and more each goroutine readied while a P is
// idle starts a spinning thread (bench/README.md has the CPU it saves).
//
// An attendant is one worker more than Config.Workers, as the reader it
// replaces was one goroutine more. A worker waiting on a source is no
// worker the queue can wake, so what others queue while no worker is
// parked (TCP, a query back from a slow step, a busy worker's feed)
// nudges one out of its wait (Source.Nudge), as the queue would wake a
// parked one.
//
// Its source is unwatched while the attendant serves; what arrives
// meanwhile is fed by whichever worker takes the next query (Config.Feed).
// That wait is one query's service, microseconds, unless the queries have
// lately been long ones (an online signature): then, as it takes each, the
// attendant hands its source to a parked worker to wait on once (a
// stand-in) so that nothing waits behind it while other CPUs are idle.

// A Source is where an attendant waits for tasks.
type Source interface {
	// Wait blocks until tasks may have arrived, queues them with
	// SubmitAllTaking, and returns false once the source is closed. Two
	// workers may wait at once (an attendant back while its stand-in
	// still waits).
	Wait() bool
	// Nudge makes a Wait in progress return soon, or else the next one:
	// a task was queued with no worker parked to take it.
	Nudge()
	// Interrupt makes every Wait return at once from now on: Close calls
	// it so that no worker is left waiting there.
	Interrupt()
}

// Attend makes the calling goroutine a worker of q, one more than
// Config.Workers, that waits on s where the others park. It returns when
// the attendant exits, after Close, which waits for it like any worker and
// interrupts its waits. The tasks queued on q must only compute (as a
// Computing task does): the stall check counts no attendant, busy or not,
// as blocked (on one CPU, the attendant and a worker each inside a costly
// query while they take turns are two workers inside a query, more than
// the CPUs, which the check reads as blocked ones: it added workers up to
// the limit, bench/README.md).
func (q *Queue) Attend(s Source) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	w := q.addWorker()
	w.attendant, w.attend = true, s
	q.attendants++
	q.mu.Unlock()
	defer q.wg.Done()
	w.serve()
}

// SubmitAllTaking is SubmitAll for s's Wait: the worker waiting there
// takes the first tasks itself (sourceKeeps), so no parked worker is
// woken for them.
func (q *Queue) SubmitAllTaking(s Source, ts []Arrived) { q.submitAll(ts, s) }

// sourceKeeps is how many of the tasks a Source's Wait queues the worker
// waiting there serves itself, no parked worker woken for them: the first,
// and as many more as it serves in handHold by its queries' recent time,
// as a hand (hand.go), at most handMax in all; or, where its waits lately
// lasted twice as long as a query takes it, in keepHold, at most keepMax.
// Waking a worker for a few cheap queries costs more than the wait it
// saves them: on two CPUs at 20,000 q/s, arrivals a few at a time, each
// worker woken readied a thread that stole it from the P that readied it
// (a futex wake, a spinning thread, runqsteal's sleeps; bench/README.md).
// The attendant's time counts as well as the waiting worker's, the longer
// of the two: a stand-in waits only while the attendant's queries are
// long, and one that served cheap ones before would otherwise keep a
// batch of long ones to itself while workers stay parked. Only s's
// workers count: with a source for each core, the long waits of an
// attendant whose socket is quiet would make a busy one keep up to 32
// queries to itself while the workers that could serve them stay parked.
// Called with q.mu held.
func (q *Queue) sourceKeeps(s Source) int {
	var service, waits int64
	for _, w := range q.workers {
		if w.waitingOn == s || w.attend == s {
			service = max(service, w.serviceSeen.Load())
		}
		if w.waitingOn == s {
			waits = max(waits, w.waits)
		}
	}
	if service <= 0 {
		// Not timed yet: two, so that it serves two in a row and the
		// second times the first (a worker times a query only by the
		// next it takes, never across a wait).
		return 2
	}
	if waits >= 2*service {
		// Idle two thirds of the time or more: what came together now
		// is a burst in a light load, which one worker serves in
		// keepHold for less than waking another costs.
		return 1 + servedIn(keepHold, keepMax-1, service)
	}
	return 1 + handBehind(service)
}

// keepHold bounds what a worker mostly idle on its source keeps of what
// one wait read, by its queries' recent time, and keepMax how many. At a
// light load queries arrive a few at a time, and now and then more at
// once than a hand: a client's timer late, a burst. A worker woken for
// them cost more CPU than the wait it spared them: on two CPUs at 20,000
// q/s the attendant woke one 630 times a second for what came past its
// hand, each a futex wake, a thread that spun and slept in runqgrab and
// stole the worker from the P that readied it, and a futex sleep after
// (bench/README.md). Where the worker is busy a third of the time or
// more, a hand's worth is kept, so that a burst under a heavier load still
// wakes the others.
const (
	keepHold = 4 * handHold
	keepMax  = 32
)

// waitOnSource waits on the worker's source, or the one it stands in for,
// where it would park, and reports whether it did. Called with q.mu held,
// the queue empty and open; returns with it held.
func (w *worker) waitOnSource() bool {
	s := w.attend
	if s == nil {
		s, w.stand = w.stand, nil
	}
	if s == nil {
		return false
	}
	q := w.q
	w.waitingOn, w.nudged = s, false
	q.mu.Unlock()
	w.tellDropped()
	open := s.Wait()
	q.mu.Lock()
	w.waitingOn = nil
	if !open && s == w.attend {
		w.attend = nil // its source is closed: it parks from now on
	}
	return true
}

// nudgeWaiting picks, for n tasks just queued with no worker parked to
// take them, up to n workers waiting on a source not yet nudged, and
// returns their sources, to be nudged once q.mu is released. Called with
// q.mu held.
func (q *Queue) nudgeWaiting(n int, into []Source) []Source {
	for _, w := range q.workers {
		if n == 0 {
			break
		}
		if w.waitingOn != nil && !w.nudged {
			w.nudged = true
			into = append(into, w.waitingOn)
			n--
		}
	}
	return into
}

// standIn leaves the attendant's source to a parked worker, to wait on
// once, when the attendant takes a query while its queries lately took
// longer than handHold: its source would go unwatched that long. Called
// with q.mu held.
func (w *worker) standIn() {
	q := w.q
	k := len(q.idle)
	if w.attend == nil || w.service <= handHold || k == 0 {
		return
	}
	v := q.idle[k-1]
	q.idle = q.idle[:k-1]
	v.stand = w.attend
	v.wake <- struct{}{} // buffered: a parked worker's channel is empty
}

// interruptWaits returns the sources the workers wait on, for Close to
// interrupt once q.mu is released. Called with q.mu held.
func (q *Queue) interruptWaits() []Source {
	var sources []Source
	for _, w := range q.workers {
		if w.waitingOn != nil {
			sources = append(sources, w.waitingOn)
		}
	}
	return sources
}
