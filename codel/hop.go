package codel

import "context"

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
}

// Suspend runs c's slow step on pool, then queues its resumption on the
// hop's queue, both with the query's original arrival time: CoDel checks
// it when the pool takes it and again when a worker takes it back, and a
// query whose time ran out while it was away is dropped there, counted.
// In place, the same steps run on the caller's goroutine, with the same
// deadline checked before each.
func (h Hop) Suspend(pool *Queue, c Continuation) {
	if h.Queue == nil {
		late := func() bool { return pool.cfg.Clock()-h.Arrival > pool.deadline }
		if late() {
			pool.countDrop(Deadline)
			c.Drop(Deadline)
			return
		}
		c.Slow()
		if late() {
			pool.countDrop(Deadline)
			c.Drop(Deadline)
			return
		}
		c.Resume()
		return
	}
	pool.Submit(&slowStep{c: c, back: h.Queue, arrival: h.Arrival}, h.Arrival)
}

func (q *Queue) countDrop(r Reason) {
	q.mu.Lock()
	q.drops[r]++
	q.mu.Unlock()
}

type slowStep struct {
	c       Continuation
	back    *Queue
	arrival int64
}

func (s *slowStep) Run() {
	s.c.Slow()
	s.back.Submit(resumeStep{s.c}, s.arrival)
}

func (s *slowStep) Drop(r Reason) { s.c.Drop(r) }

type resumeStep struct{ c Continuation }

func (r resumeStep) Run()          { r.c.Resume() }
func (r resumeStep) Drop(x Reason) { r.c.Drop(x) }

type hopKey struct{}

// NewContext returns ctx carrying h, for the plugins below codel.
func NewContext(ctx context.Context, h Hop) context.Context {
	return context.WithValue(ctx, hopKey{}, h)
}

// FromContext returns the hop ctx carries, if any.
func FromContext(ctx context.Context) (Hop, bool) {
	h, ok := ctx.Value(hopKey{}).(Hop)
	return h, ok
}
