package replay

import "sync/atomic"

// An answer is kept on its question's second miss, not its first: a
// question asked once is not kept. A flood of names that do not exist,
// each asked once (a random-subdomain attack: each query's first label
// drawn at random, so that no resolver's cache can answer it), otherwise
// had every answer kept, a copy and an allocation a query, and pushed
// the answers of the questions asked again and again out of their sets.
// With half the load test's queries such names, the full chain answered
// 0.96x the queries a second it answered keeping none, in twice the
// memory (bench/README.md, 2026-12-06).
//
// The questions missed lately are the Shared's ghosts: a slot a question,
// chosen by its hash's top bits, holding a fingerprint of the rest. A
// question missed is kept where its ghost is there (missed before, on any
// core, and not overwritten since by another question's), or where its
// set holds an answer kept for it from an older version of the zone, or
// asked another way (kept before: a question asked again). Else its ghost
// is written, and its answer is not kept. A ghost is written only for a
// miss, a store to a slot of its own that no other question's miss is
// likely to write at once: no write shared by every query. Two questions
// of one fingerprint (one in 2^31 of those sharing a slot) may have an
// answer kept on the first miss of the second: harmless.
//
// Every question is missed twice before it is kept: after a start, and
// for a question new to the zone. After a new version of a zone, a
// question whose older answer is still in its set is kept at its first
// miss.

// missedBefore reports whether the question of hash qh was missed lately,
// and where it was not, remembers that it was.
func (c *Cache) missedBefore(qh uint64) bool {
	g := c.ghost(qh)
	fp := uint32(qh) | 1 // never 0, the empty slot's
	if g.Load() == fp {
		return true
	}
	g.Store(fp)
	return false
}

// ghost is the slot of the question of hash qh.
func (c *Cache) ghost(qh uint64) *atomic.Uint32 { return ghostAt(c.ghosts, qh) }

// ghostAt is the slot of the question of hash qh among ghosts.
func ghostAt(ghosts []atomic.Uint32, qh uint64) *atomic.Uint32 {
	return &ghosts[(qh>>32)&uint64(len(ghosts)-1)]
}
