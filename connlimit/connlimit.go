// Package connlimit bounds the TCP connections a server holds: so many per
// client address, and so many in all. A client that opens connections and
// leaves them idle holds a goroutine, a buffer and a descriptor each until
// the idle timeout closes them; without a bound per client, one address
// can take every descriptor the process has.
//
// The server tells the Limiter of each connection when it accepts it
// (Admit), and nothing when it closes: CoreDNS's listener has a hook on
// accept and none on close. So the table holds every connection admitted,
// closed or not, and asks the kernel which are still open only when it has
// to decide: when a client is at its limit, its own connections; when the
// table is full, all of them (at most once a second). A connection counts
// while the kernel holds it open on the server's side (Alive). The table
// never holds more than its bound, whatever the number of clients.
package connlimit

import (
	"net/netip"
	"sync"
	"time"
)

// Verdict is what Admit decided.
type Verdict uint8

const (
	Admitted  Verdict = iota
	PerClient         // the client holds its limit of open connections
	Full              // the table holds its bound of open connections
)

func (v Verdict) String() string {
	return [...]string{"admitted", "per-client", "full"}[v]
}

// Conn is one TCP connection, as the server's side sees it.
type Conn struct {
	Client, Local netip.AddrPort
}

// Limiter is the table of admitted connections. Its methods are safe for
// concurrent use.
type Limiter struct {
	// Alive reports whether the kernel still holds c open on the server's
	// side; an error counts as open (the limit errs on the side of the
	// bound).
	Alive func(c Conn) (bool, error)
	Now   func() time.Time // time.Now where nil

	mu        sync.Mutex
	perClient int // 0: no limit per client
	max       int
	clients   map[netip.Addr][]Conn // by client address
	n         int
	lastSweep time.Time
}

// sweepEvery spaces the sweeps of a full table: a sweep asks the kernel
// about every connection held, and a flood at the bound would otherwise
// ask at every accept.
const sweepEvery = time.Second

// New returns a Limiter of perClient connections per client address (0 for
// none) and max in all.
func New(perClient, max int, alive func(Conn) (bool, error)) *Limiter {
	return &Limiter{Alive: alive, perClient: perClient, max: max,
		clients: map[netip.Addr][]Conn{}}
}

// SetLimits changes the bounds; the connections held stay (a reloaded
// server keeps its clients' connections).
func (l *Limiter) SetLimits(perClient, max int) {
	l.mu.Lock()
	l.perClient, l.max = perClient, max
	l.mu.Unlock()
}

// Admit decides on a connection just accepted, and holds it if admitted.
func (l *Limiter) Admit(c Conn) Verdict {
	client := c.Client.Addr().Unmap()
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.perClient > 0 && len(l.clients[client]) >= l.perClient {
		l.prune(client)
		if len(l.clients[client]) >= l.perClient {
			return PerClient
		}
	}
	if l.n >= l.max {
		if now := l.now(); now.Sub(l.lastSweep) >= sweepEvery {
			l.lastSweep = now
			for a := range l.clients {
				l.prune(a)
			}
		}
		if l.n >= l.max {
			return Full
		}
	}
	l.clients[client] = append(l.clients[client], c)
	l.n++
	return Admitted
}

// Held returns how many connections the table holds, closed ones not yet
// found out included.
func (l *Limiter) Held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// prune drops the client's connections that the kernel has closed.
func (l *Limiter) prune(client netip.Addr) {
	held := l.clients[client]
	kept := held[:0]
	for _, c := range held {
		if open, err := l.Alive(c); open || err != nil {
			kept = append(kept, c)
			continue
		}
		l.n--
	}
	clear(held[len(kept):])
	if len(kept) == 0 {
		delete(l.clients, client)
		return
	}
	l.clients[client] = kept
}

func (l *Limiter) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}
