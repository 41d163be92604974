package codel

// Life is one query's time on a worker, kept by whoever read the query
// (codel's socket reader) so that what the plugins made for the query, a
// writer or an answer, can be made again for the next one instead of
// allocated: each registers it with AtEnd, and the reader calls End when
// the chain has returned.
//
// A query whose work leaves the worker (Hop.Suspend, Hop.Send, or a plugin
// that parks it to be brought back by Hop.Back) is held: its writer,
// request and answer stay with whoever took it, End recycles none of
// them, and the garbage collector frees them when that work is done.
//
// Only the worker that runs the query touches its Life: nothing here is
// shared between cores.
type Life struct {
	held bool
	n    int
	ends [maxEnds]Ender
}

// An Ender is something made for one query, given back at its end.
type Ender interface{ End() }

// maxEnds is how many things one query may hand back: a writer and an
// answer each, with room for plugins not yet written.
const maxEnds = 4

// Hold marks the query as kept past the chain's return. Suspend and Send
// call it; a plugin that keeps a query's writer or messages in any other
// way, to answer later, must call it before it returns. A nil Life (a
// query no one recycles) ignores it.
func (l *Life) Hold() {
	if l != nil {
		l.held = true
	}
}

// AtEnd registers e to be given back when the query ends, and reports
// whether it will be: not on a nil Life, a held one, or one that has no
// room left. A caller told false keeps e to itself (the garbage collector
// frees it), and must not put it back anywhere.
func (l *Life) AtEnd(e Ender) bool {
	if l == nil || l.held || l.n == maxEnds {
		return false
	}
	l.ends[l.n] = e
	l.n++
	return true
}

// End gives back, last registered first, what the query's plugins
// registered, and readies the Life for the next query. It reports whether
// the query is held instead: then nothing is given back, whoever holds the
// query may still use what its reader made for it (its writer), and the
// reader must not reuse that, nor the Life, which stays held (a plugin
// that meets the query again on its way back registers nothing).
func (l *Life) End() (held bool) {
	if l.held {
		return true
	}
	for i := l.n - 1; i >= 0; i-- {
		l.ends[i].End()
	}
	*l = Life{}
	return false
}
