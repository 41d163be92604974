package codel

// An attendant is a worker that waits on a source of tasks (a socket) where
// the others park, and queues what arrives there itself (Attend). At a
// light load a query then readies one goroutine, the attendant woken by
// its arrival, instead of two: a reader woken by it, then the worker the
// reader wakes. On two CPUs and more each goroutine readied while a P is
// idle starts a spinning thread; at 20,000 queries a second on two CPUs the
// attendant cut the CPU a query from about 25 µs to 19 (bench/README.md).
//
// Its source is unwatched while the attendant serves; what arrives
// meanwhile is fed by whichever worker takes the next query (Config.Feed).
// That wait is one query's service, microseconds, unless the queries have
// lately been long ones (an online signature): then, as it takes each, the
// attendant hands its source to an idle worker to wait on once (a stand-in)
// so that nothing waits behind it while other CPUs are idle.

// taskSource is where an attendant waits.
type taskSource struct {
	// wait blocks until tasks may have arrived, queues them with
	// SubmitAllTaking, and returns false once the source is closed. It
	// may be called by two workers at once (an attendant back while its
	// stand-in still waits): it must allow that.
	wait func() bool
	// interrupt makes a wait in progress, and every later one, return
	// soon: Close calls it so that no worker is left waiting there.
	interrupt func()
}

// Attend makes the calling goroutine a worker of q whose source is wait
// (see taskSource for wait and interrupt), one more than Config.Workers.
// It returns when the attendant exits, after Close: Close does not wait
// for it, and interrupts its wait. The tasks queued on q must only compute
// (as a Computing task does): the stall check does not count an
// attendant, busy or not, as blocked. And with one worker it is not worth
// it: with one CPU no P is idle, and two workers would take turns on it.
func (q *Queue) Attend(wait func() bool, interrupt func()) {
	q.mu.Lock()
	if q.closed {
		q.mu.Unlock()
		return
	}
	w := &worker{q: q, wake: make(chan struct{}, 1), emptied: true, attendant: true,
		attend: &taskSource{wait: wait, interrupt: interrupt}}
	if q.cfg.Local != nil {
		w.local = q.cfg.Local()
	}
	q.workers = append(q.workers, w)
	q.mu.Unlock()
	w.serve()
}

// SubmitAllTaking is SubmitAll for a source's wait: the worker waiting
// there takes the first task itself, so no idle worker is woken for it.
func (q *Queue) SubmitAllTaking(ts []Arrived) { q.submitAll(ts, 1) }

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
	w.waitingOn = s
	q.mu.Unlock()
	w.tellDropped()
	open := s.wait()
	q.mu.Lock()
	w.waitingOn = nil
	if !open && s == w.attend {
		w.attend = nil // its source is closed: it parks from now on
	}
	return true
}

// standIn leaves the attendant's source to an idle worker, to wait on once,
// when the attendant takes a query while its queries lately took longer
// than handHold: its source would go unwatched that long. Only while
// another worker stays parked: what others queue (TCP, a query back from
// a slow step) must find a worker that is not waiting on a source, and on
// one CPU a stand-in could not run beside the attendant anyway. Called
// with q.mu held.
func (w *worker) standIn() {
	q := w.q
	k := len(q.idle)
	if w.attend == nil || w.service <= handHold || k < 2 {
		return
	}
	v := q.idle[k-1]
	q.idle = q.idle[:k-1]
	v.stand = w.attend
	v.wake <- struct{}{} // buffered: a parked worker's channel is empty
}

// interruptWaits interrupts the workers waiting on sources, for Close.
// Called with q.mu held; the interrupts run after it is released.
func (q *Queue) interruptWaits() []func() {
	var calls []func()
	for _, w := range q.workers {
		if w.waitingOn != nil {
			calls = append(calls, w.waitingOn.interrupt)
		}
	}
	return calls
}
