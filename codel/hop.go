package codel

import (
	"context"

	"github.com/ontimedns/ontime/internal/ahead"
)

// A Continuation is the rest of a query's work around a slow step (an
// ALIAS lookup over the network): the worker that serves the query hands
// it off instead of waiting, and moves on to the next query.
type Continuation interface {
	Slow()       // on a goroutine of the pool: may block, within its own timeouts
	Resume()     // back on a worker of the queue the query came from
	Drop(Reason) // instead, at whichever hop finds the query late
}

// Hop is where a query is being served: from a Queue, or in place (TCP,
// where each connection has its own goroutine and nobody waits behind it).
// It carries the query's arrival time from hop to hop.
type Hop struct {
	Queue   *Queue // where the query comes back to; nil: in place
	Arrival int64  // by the queue's clock
	Life    *Life  // the query's, where its reader recycles what was made for it; nil otherwise
	// Taken is when a worker of Queue took the query (the queue's clock),
	// where the query is a LocalTask; 0 otherwise. What times the query's
	// work (the metrics' duration) starts from it instead of reading the
	// clock again.
	Taken int64
	// Note is the query's warming (ahead.Note), where a worker warmed it
	// before serving it; nil otherwise. What the warming found (an NSEC3
	// denial's record, zonestore's warmcover.go) the plugin that answers
	// may read instead of finding it again, once it has checked that the
	// note is of its own question.
	Note *ahead.Note
}

// Suspend runs c's slow step on pool, then queues its resumption on the
// hop's queue, both with the query's original arrival time: CoDel checks
// it when the pool takes it and again when a worker takes it back, and a
// query whose time ran out while it was away is dropped there, counted.
// In place, the same steps run on the caller's goroutine, with the same
// deadline checked before each.
func (h Hop) Suspend(pool *Queue, c Continuation) {
	if h.Queue == nil {
		// In place: done before the chain returns, nothing to hold.
		if h.Late(pool) {
			c.Drop(Deadline)
			return
		}
		c.Slow()
		if h.Late(pool) {
			c.Drop(Deadline)
			return
		}
		c.Resume()
		return
	}
	h.Send(pool, &slowStep{c: c, hop: h})
}

// Hold marks the query as kept past the chain's return (Life.Hold): a
// plugin that parks it to bring it back itself with Back calls it.
func (h Hop) Hold() { h.Life.Hold() }

// Send queues t on pool with the query's arrival time, and returns at
// once: CoDel checks it there like any query. It is the first half of
// Suspend, for a caller that shares one slow step among several queries
// (ALIAS lookups of one target) and brings each back itself, with Back.
func (h Hop) Send(pool *Queue, t Task) {
	h.Life.Hold()
	pool.Submit(t, h.Arrival)
}

// Back queues t on the hop's queue with the query's arrival time, to run
// on a worker there, checked by CoDel again; a query whose time ran out
// while it was away is dropped there (t.Drop), counted. In place, t runs
// on the caller's goroutine.
func (h Hop) Back(t Task) {
	if h.Queue == nil {
		t.Run()
		return
	}
	h.Queue.Submit(t, h.Arrival)
}

// Late reports whether the query is past pool's deadline, and if it is,
// counts it among pool's drops (Deadline): for a caller that serves the
// query in place and must drop it itself.
func (h Hop) Late(pool *Queue) bool {
	if pool.cfg.Clock()-h.Arrival <= pool.deadline {
		return false
	}
	pool.countDrop(Deadline)
	return true
}

// Dropped counts, among the drops of the query's queue, one that a plugin
// below made itself (RateLimited): all drops are counted in one place. A
// query that came through no queue (TCP) is not counted here.
func (h Hop) Dropped(r Reason) {
	if h.Queue != nil {
		h.Queue.countDrop(r)
	}
}

// Refused counts, among the queue's drops, what the server refused before
// any query reached a queue (TCPConns, Malformed): all drops are counted in
// one place.
func (q *Queue) Refused(r Reason) { q.countDrop(r) }

func (q *Queue) countDrop(r Reason) {
	q.mu.Lock()
	q.drops[r]++
	q.mu.Unlock()
}

type slowStep struct {
	c   Continuation
	hop Hop
}

func (s *slowStep) Run() {
	s.c.Slow()
	s.hop.Back(resumeStep{s.c})
}

func (s *slowStep) Drop(r Reason) { s.c.Drop(r) }

type resumeStep struct{ c Continuation }

func (r resumeStep) Run()          { r.c.Resume() }
func (r resumeStep) Drop(x Reason) { r.c.Drop(x) }

// HopKey is the context key a Hop is kept under. A context of the
// caller's own, made once per query to carry several values, may answer it
// with a *Hop from its Value method: FromContext takes either.
type HopKey struct{}

// NewContext returns ctx carrying h, for the plugins below codel.
func NewContext(ctx context.Context, h Hop) context.Context {
	return context.WithValue(ctx, HopKey{}, h)
}

// FromContext returns the hop ctx carries, if any.
func FromContext(ctx context.Context) (Hop, bool) {
	switch h := ctx.Value(HopKey{}).(type) {
	case Hop:
		return h, true
	case *Hop:
		return *h, h != nil
	}
	return Hop{}, false
}
