// Package codel is admission control for a DNS server: one bounded queue in
// front of a pool of long-lived workers, with the CoDel control law of RFC
// 8289 deciding, from how long each query has waited since it arrived, which
// late queries to drop. It does not import CoreDNS.
package codel

import "math"

// Controller is the CoDel control law of RFC 8289, section 5, on the
// sojourn time of queries rather than of packets. Times are nanoseconds of
// any monotonic clock; the caller passes "now" in, so tests replay the
// RFC's behaviour with a clock of their own.
//
// The RFC's dequeue drops packets in a loop; here the queue asks once per
// candidate (Drop), which makes the same decisions one at a time.
type Controller struct {
	Target   int64 // acceptable standing sojourn time
	Interval int64 // how long the sojourn may stay above Target before dropping starts

	firstAbove int64 // when the sojourn may first be called persistent; 0: below target
	dropNext   int64 // when the next drop is due, while dropping
	count      int   // drops since dropping started (or re-entered)
	lastCount  int   // count when dropping was last entered
	dropping   bool
}

// okToDrop is the RFC's dodequeue() without the dequeue: whether the
// sojourn has stayed above target for a whole interval. backlog is the
// number of queries queued, this one included: with one or none, there is
// no standing queue to drain (the RFC's "bytes() <= MAXPACKET").
func (c *Controller) okToDrop(now, sojourn int64, backlog int) bool {
	if sojourn < c.Target || backlog <= 1 {
		c.firstAbove = 0
		return false
	}
	if c.firstAbove == 0 {
		c.firstAbove = now + c.Interval
		return false
	}
	return now >= c.firstAbove
}

// Drop decides about the query at the head of the queue, which has waited
// sojourn at time now: true means drop it and ask again about the next.
func (c *Controller) Drop(now, sojourn int64, backlog int) bool {
	ok := c.okToDrop(now, sojourn, backlog)
	if c.dropping {
		if !ok {
			c.dropping = false // the sojourn went below target: leave the dropping state
			return false
		}
		if now >= c.dropNext {
			c.count++
			c.dropNext = c.controlLaw(c.dropNext)
			return true
		}
		return false
	}
	if !ok {
		return false
	}
	// Enter the dropping state. If it was left only recently, start near
	// the drop rate that controlled the queue last time (RFC 8289, 5.5).
	c.dropping = true
	delta := c.count - c.lastCount
	if delta > 1 && now-c.dropNext < 16*c.Interval {
		c.count = delta
	} else {
		c.count = 1
	}
	c.dropNext = c.controlLaw(now)
	c.lastCount = c.count
	return true
}

// Empty tells the controller the queue ran dry: no standing queue.
func (c *Controller) Empty() {
	c.firstAbove = 0
	c.dropping = false
}

// Dropping reports whether the controller is in its dropping state.
func (c *Controller) Dropping() bool { return c.dropping }

// Congested reports whether the sojourn is above target now, whether or not
// it has stayed there long enough to drop.
func (c *Controller) Congested() bool { return c.dropping || c.firstAbove != 0 }

// controlLaw is t + interval/sqrt(count): drops come closer together the
// longer the queue stays above target.
func (c *Controller) controlLaw(t int64) int64 {
	return t + int64(float64(c.Interval)/math.Sqrt(float64(c.count)))
}
