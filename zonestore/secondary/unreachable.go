package secondary

import (
	"errors"
	"net"
	"sync"
	"time"
)

// A primary that does not answer holds the worker that asks it for the
// query's timeout (10 s). Behind a primary gone, a catalog's 100,000
// members would each hold a worker that long at every retry: ten workers
// would take more than a day to go round them once, and every other
// zone's refresh, a NOTIFY's among them, would wait behind. BIND keeps
// an "unreachable cache" of primaries for this: a primary that failed to
// answer twice in a row is not asked again for a while (10 s at first,
// twice as long each time it fails again, up to 10 minutes), and a zone
// whose every primary is held fails its refresh at once, to try again at
// its retry interval as after any failure. An answer from the primary,
// of any kind, or a NOTIFY from its address, lets it go at once.

// Unreachable primaries are held from holdMin, doubling, to holdMax.
const (
	holdMin = 10 * time.Second
	holdMax = 10 * time.Minute
)

// unreachable is a Scheduler's record of the primaries that did not
// answer, by address (host:port).
type unreachable struct {
	mu  sync.Mutex
	by  map[string]*misses
	now func() time.Time
}

type misses struct {
	count int           // queries in a row that got no answer
	until time.Time     // not asked before, once count is 2 or more
	hold  time.Duration // the last hold
}

// held reports whether primary is not to be asked now, and until when.
// A nil u holds nothing: a zone not scheduled asks every primary.
func (u *unreachable) held(primary string) (time.Time, bool) {
	if u == nil {
		return time.Time{}, false
	}
	u.mu.Lock()
	defer u.mu.Unlock()
	m := u.by[primary]
	if m == nil || !u.now().Before(m.until) {
		return time.Time{}, false
	}
	return m.until, true
}

// missed notes that primary did not answer. The second miss in a row
// holds it; a miss once a hold has lapsed (the probe that ends it) holds
// it twice as long. Misses while it is held (queries sent before) change
// nothing. It returns the new hold, 0 for none.
func (u *unreachable) missed(primary string) time.Duration {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.by == nil {
		u.by = map[string]*misses{}
	}
	m := u.by[primary]
	if m == nil {
		m = &misses{}
		u.by[primary] = m
	}
	m.count++
	now := u.now()
	if m.count < 2 || now.Before(m.until) {
		return 0
	}
	m.hold = min(max(2*m.hold, holdMin), holdMax)
	m.until = now.Add(m.hold)
	return m.hold
}

// answered forgets primary's misses: it answered. It reports whether the
// primary had been held.
func (u *unreachable) answered(primary string) bool {
	u.mu.Lock()
	defer u.mu.Unlock()
	m := u.by[primary]
	delete(u.by, primary)
	return m != nil && m.hold > 0
}

// heardFrom forgets the misses of every primary at ip, on any port: a
// NOTIFY came from it.
func (u *unreachable) heardFrom(ip net.IP) {
	u.mu.Lock()
	defer u.mu.Unlock()
	for p := range u.by {
		if host, _, err := net.SplitHostPort(p); err == nil && net.ParseIP(host).Equal(ip) {
			delete(u.by, p)
		}
	}
}

// heldNow returns the primaries held now.
func (u *unreachable) heldNow() []string {
	u.mu.Lock()
	defer u.mu.Unlock()
	var out []string
	now := u.now()
	for p, m := range u.by {
		if now.Before(m.until) {
			out = append(out, p)
		}
	}
	return out
}

// noAnswer reports whether err says the primary did not answer (a
// timeout, a connection refused or reset, no route), not that it
// answered something unwelcome (an rcode, a broken transfer, a TSIG
// error): only the first holds a worker for nothing.
func noAnswer(err error) bool {
	var ne net.Error
	return errors.As(err, &ne)
}
