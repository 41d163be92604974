// Package connlimit bounds the TCP connections a server holds: so many per
// client (an IPv4 address, an IPv6 /64), and so many in all. A client that opens connections and
// leaves them idle holds a goroutine, a buffer and a descriptor each until
// the idle timeout closes them; without a bound per client, one address
// can take every descriptor the process has.
//
// The server tells the Limiter of each connection when it accepts it
// (Admit), and, where it can, when it closes it (Release): CoreDNS's
// listener has a hook on accept and none on close. So the table holds
// every connection admitted and not released, closed or not, and asks
// the kernel which are still open only when it has to decide: when a
// client is at its limit, its own connections; when the table is full,
// all of them (at most once a second). A connection counts while the
// kernel holds it open on the server's side (Alive). The table never
// holds more than its bound, whatever the number of clients.
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
	clients   map[netip.Addr]*client
	n         int
	lastSweep time.Time
}

// client is what the table holds of one client.
type client struct {
	conns []Conn
	asked time.Time // when the kernel was last asked about conns
}

// sweepEvery spaces the sweeps of a full table: a sweep asks the kernel
// about every connection held, and a flood at the bound would otherwise
// ask at every accept.
const sweepEvery = time.Second

// askEvery spaces the questions about one client's connections: a client
// at its bound that keeps connecting would otherwise cost a question per
// connection it holds at every attempt. A connection it closed is found
// out at its next attempt after this.
const askEvery = 10 * time.Millisecond

// New returns a Limiter of perClient connections per client (0 for none)
// and max in all.
func New(perClient, max int, alive func(Conn) (bool, error)) *Limiter {
	return &Limiter{Alive: alive, perClient: perClient, max: max,
		clients: map[netip.Addr]*client{}}
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
	addr := clientOf(c.Client.Addr())
	l.mu.Lock()
	defer l.mu.Unlock()
	cl := l.clients[addr]
	if l.perClient > 0 && cl != nil && len(cl.conns) >= l.perClient {
		if now := l.now(); now.Sub(cl.asked) >= askEvery {
			cl.asked = now
			l.prune(addr, cl)
		}
		if len(cl.conns) >= l.perClient {
			return PerClient
		}
	}
	if l.n >= l.max {
		if now := l.now(); now.Sub(l.lastSweep) >= sweepEvery {
			l.lastSweep = now
			for a, c := range l.clients {
				l.prune(a, c)
			}
		}
		if l.n >= l.max {
			return Full
		}
	}
	if cl = l.clients[addr]; cl == nil {
		cl = &client{}
		l.clients[addr] = cl
	}
	cl.conns = append(cl.conns, c)
	l.n++
	return Admitted
}

// Release drops c, which the server has closed, from the table. A server
// that sees its connections close (codel's own listeners do) says so,
// and a client's closed connections then never count against it, however
// fast it opens and closes them; the kernel is asked only about those
// that came another way.
func (l *Limiter) Release(c Conn) {
	addr := clientOf(c.Client.Addr())
	l.mu.Lock()
	defer l.mu.Unlock()
	cl := l.clients[addr]
	if cl == nil {
		return
	}
	for i, x := range cl.conns {
		if x != c {
			continue
		}
		last := len(cl.conns) - 1
		cl.conns[i], cl.conns[last] = cl.conns[last], Conn{}
		cl.conns = cl.conns[:last]
		l.n--
		if last == 0 {
			delete(l.clients, addr)
		}
		return
	}
}

// Held returns how many connections the table holds, closed ones not yet
// found out included.
func (l *Limiter) Held() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.n
}

// prune drops the client's connections that the kernel has closed, and
// the client once it holds none.
func (l *Limiter) prune(addr netip.Addr, cl *client) {
	kept := cl.conns[:0]
	for _, c := range cl.conns {
		if open, err := l.Alive(c); open || err != nil {
			kept = append(kept, c)
			continue
		}
		l.n--
	}
	clear(cl.conns[len(kept):])
	if cl.conns = kept; len(kept) == 0 {
		delete(l.clients, addr)
	}
}

// clientOf is the client an address belongs to: an IPv4 address, or the
// /64 of an IPv6 one (what one host is given; per address, a host could
// open as many connections as it has addresses).
func clientOf(a netip.Addr) netip.Addr {
	if a = a.Unmap(); a.Is4() {
		return a
	}
	p, _ := a.WithZone("").Prefix(64)
	return p.Addr()
}

func (l *Limiter) now() time.Time {
	if l.Now != nil {
		return l.Now()
	}
	return time.Now()
}
