package codel

import "time"

// A worker takes more than one query under one taking of the queue's lock
// when more are queued than workers to take them: the queries it takes
// together are its hand, served next, one at a time, without the lock. The
// lock is the one memory every query writes, and every core takes it: on
// two CPUs, the chain served off the queue one query a lock ran at 1.1 to
// 1.6 times its speed on one, where the chain alone scales 1.8 times
// (BenchmarkQueuedChain, BenchmarkChainParallel; bench/README.md).
//
// CoDel still decides for each query: each one taken into a hand is taken
// by next, at the same instant, the law and the shedding applied to it as
// to any. What the queue cannot see is the wait inside a hand, so a hand
// is kept short: at most handMax queries, no more than the queue's share
// per worker, and no more than a worker serves in handHold by the time its
// queries have taken lately. A query that waited past the deadline by the
// time its turn comes is dropped there, counted with the queue's. Only
// tasks that say they never block (Computing) are served with others
// behind them: a hand is taken after one of those alone, and ends at the
// first task taken that does not say so. Every other task (a query whose
// plugins may wait on the network, a continuation's slow step) is taken
// as before, alone.

// handMax is the most queries a worker takes under one taking of the
// lock: the one it serves at once, and its hand behind it. The last waits
// for the others' service, unseen by CoDel.
const handMax = 8

// handHold bounds the wait a hand adds: about as long as a worker's
// answers wait in its outbox (plugin/codel's maxHold), a fiftieth of CoDel's
// default target. Queries that take 1 ms (an online signature) get no hand.
const handHold = int64(100 * time.Microsecond)

// Computing is a Task that only computes: it never waits on I/O or a
// sleep, so the queries in a worker's hand wait behind it for no longer
// than its computation.
type Computing interface {
	Task
	OnlyComputes() bool
}

// onlyComputes says whether t is a Computing task that says so.
func onlyComputes(t Task) bool {
	c, ok := t.(Computing)
	return ok && c.OnlyComputes()
}

// fromHand returns the next query in the worker's hand, dropping those
// that waited past the deadline, or false when the hand is empty.
func (w *worker) fromHand() (entry, int64, bool) {
	if w.served == len(w.hand) {
		return entry{}, 0, false
	}
	now := w.q.cfg.Clock()
	w.timeService(now)
	for w.served < len(w.hand) {
		e := w.hand[w.served]
		w.hand[w.served] = entry{}
		w.served++
		if sojourn := now - e.arrival; sojourn <= w.q.deadline {
			w.took = now
			return e, sojourn, true
		}
		w.stats.late.Add(1)
		w.dropped = append(w.dropped, drop{e.task, Deadline})
	}
	w.hand, w.served = w.hand[:0], 0
	return entry{}, 0, false
}

// fillHand takes queries into the empty hand, as many as handSize says,
// after first, the query the worker took at now, if that one only
// computes; it stops after a query that may not. Called with q.mu held.
func (w *worker) fillHand(first Task, now int64) {
	w.hand, w.served = w.hand[:0], 0
	if !onlyComputes(first) {
		return
	}
	for range w.handSize() {
		e, _, ok := w.q.next(now, &w.dropped)
		if !ok {
			return
		}
		w.hand = append(w.hand, e)
		if !onlyComputes(e.task) {
			return
		}
	}
}

// handSize is how many more queries the worker takes with the one it
// took. Called with q.mu held.
func (w *worker) handSize() int {
	q := w.q
	if w.service <= 0 || q.n == 0 {
		return 0
	}
	return min(q.n/len(q.workers), handBehind(w.service))
}

// handBehind is how many queries may wait behind one in a hand, for a
// worker whose queries lately took service (> 0): as many as it serves in
// handHold, handMax-1 at most.
func handBehind(service int64) int { return servedIn(handHold, handMax-1, service) }

// servedIn is how many queries a worker whose queries lately took service
// (> 0) serves in hold, most at most.
func servedIn(hold int64, most int, service int64) int {
	return int(min(int64(most), hold/service))
}

// timeService counts the time since the worker last took a query, at now:
// the last query's service (and the feed after it), into the measure that
// sizes hands. A worker that parked since has no such time (took is 0).
// The measure rises at once to a longer time and falls an eighth of the
// way to a shorter one: a costly query stops hands at once, and they come
// back only after a run of cheap ones (with one query in twenty taking
// 1.25 ms and the rest 5 µs, hardly ever).
func (w *worker) timeService(now int64) {
	if w.took == 0 {
		return
	}
	t := max(now-w.took, 1)
	if t >= w.service {
		w.service = t
	} else {
		w.service -= (w.service - t) / 8
	}
	w.serviceSeen.Store(w.service)
}

// warmPasses is how many passes a worker makes over a hand it takes, to
// warm it (Config.Warm): a step of each query's a pass. zonestore's
// Store.Warm has nine steps.
const warmPasses = 9

// warm warms a hand just taken, with first, the query taken with it and
// served now, in warmPasses passes over them all, each one step further
// for every query: the steps of different queries are on their way at
// once, each pass reading what the one before fetched. Where a worker
// instead warmed the next six queries of its hand a step each before
// each one it served, only a hand's last two were warmed whole, and first
// not at all: BenchmarkQueuedChainCold took 0.91x the time warmed that way,
// 0.82x this way (bench/README.md). A query taken alone is not warmed: its
// steps, one after the other, would wait on each line as its lookup will.
// A panic is counted, as a task's is, and the worker goes on.
func (w *worker) warm(first Task) {
	warm := w.q.cfg.Warm
	if warm == nil || len(w.hand) == 0 {
		return
	}
	defer func() {
		if recover() != nil {
			w.stats.panics.Add(1)
		}
	}()
	for range warmPasses {
		more := warm(first)
		for _, e := range w.hand {
			more = warm(e.task) || more
		}
		if !more { // every answer kept, say: replay's three steps
			return
		}
	}
}
