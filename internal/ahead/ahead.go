// Package ahead lets a server tell the plugin that will answer a query
// that the query comes soon, so that the plugin has the CPU fetch what the
// answer will read while the queries before it are served.
//
// Under load a lookup in a large zone waits mostly on memory: each step of
// it (the name's slot, its node, the node's records) is an address read
// from the step before, and none of them is in the caches, the kernel's
// work between queries having evicted them (zonestore's
// BenchmarkLookupCold against BenchmarkLookup). A worker of codel knows
// the queries of its hand before it serves them; warming them in steps,
// each step for all of them at once, turns those waits into fetches that
// run side by side, and while the queries before them are served.
package ahead

import "unsafe"

// Warmer is a plugin that can warm a query it may answer.
type Warmer interface {
	// Warm takes the fetches for the query whose question is question
	// (its wire form, as sent: the name in any case, uncompressed, then
	// its type and class) one step further. Each call for a query is
	// given the same question. It is called a few times for a query
	// before the query is served, by the goroutine that serves it; it
	// writes nothing but note, and answers nothing: a query it was never
	// called for, or that it misjudged, is answered as any other.
	Warm(note *Note, question []byte)
}

// Done is the Step of a Note whose Warmer has nothing more to fetch for
// its query: the query need not be warmed again.
const Done = -1

// Note is what a Warmer keeps of one query from one call to the next:
// how far it got (Done when it is through), and what it found. Zero for a
// query not yet warmed. The server may hand the note to the plugin that
// answers the query (codel's Hop.Note), which may read what its Warmer
// found there instead of finding it again.
type Note struct {
	Step int
	P, Q unsafe.Pointer // kept alive while the query holds its Note
	W, V uint64
	// DO is set by the caller before the first call, where the query's
	// OPT record asks for DNSSEC (its DO bit): a Warmer may then fetch
	// what a signed answer reads, and spare a query that does not ask
	// the work of finding it. A Warmer keeps it as it is.
	DO bool
}
