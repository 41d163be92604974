package secondary

import (
	"errors"
	"io"
	"net"
	"sync"
	"syscall"
	"time"

	"github.com/miekg/dns"
)

// A transfer that ended cleanly leaves its TCP connection open for the
// next transfer from the same primary (RFC 7766 section 6.2.1: a client
// should reuse a connection for its next queries rather than open one for
// each). Following a catalog of a million members, a connection opened
// and closed for each member's transfer took a quarter of the CPU
// profile, on the secondary's side alone (bench/README.md).
//
// A connection waits idle at most idleTimeout, well under a primary's own
// idle timeout (Knot's tcp-idle-timeout is 10 s, miekg's 8 s, BIND's 30
// s), and no more than idlePerPrimary wait for one primary: the transfer
// workers, 10 by default, use no more at once.
const idlePerPrimary = 16

var idleTimeout = 3 * time.Second // a variable for the tests; read under idle.mu

// idle holds the process's idle connections to primaries: a catalog's
// members, and the zones of every server block, share them.
var idle = idleConns{by: map[string][]*idleConn{}, fresh: map[string]bool{}}

type idleConns struct {
	mu    sync.Mutex
	by    map[string][]*idleConn // by primary's address, the newest last
	fresh map[string]bool        // primaries each transfer from which opens a new connection
}

type idleConn struct {
	conn  *dns.Conn
	timer *time.Timer // closes it once idle for idleTimeout
}

// take returns an idle connection to primary, the newest, or nil.
func (p *idleConns) take(primary string) *dns.Conn {
	p.mu.Lock()
	defer p.mu.Unlock()
	for cs := p.by[primary]; len(cs) > 0; cs = p.by[primary] {
		c := cs[len(cs)-1]
		cs[len(cs)-1] = nil
		p.by[primary] = cs[:len(cs)-1]
		if c.timer.Stop() { // else its timer closes it
			return c.conn
		}
	}
	return nil
}

// put keeps conn, at the end of a clean transfer from primary, for the
// next; or closes it where primary takes no reuse or has enough waiting.
func (p *idleConns) put(primary string, conn *dns.Conn) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fresh[primary] || len(p.by[primary]) >= idlePerPrimary {
		conn.Close()
		return
	}
	c := &idleConn{conn: conn}
	c.timer = time.AfterFunc(idleTimeout, func() { p.expire(primary, c) })
	p.by[primary] = append(p.by[primary], c)
}

// expire closes c, idle too long.
func (p *idleConns) expire(primary string, c *idleConn) {
	p.mu.Lock()
	cs := p.by[primary]
	for i := range cs {
		if cs[i] == c {
			p.by[primary] = append(cs[:i], cs[i+1:]...)
			cs[len(cs)-1] = nil
			break
		}
	}
	p.mu.Unlock()
	c.conn.Close()
}

// freshOnly has every later transfer from primary open a connection of its
// own, and reports whether that is new: a reused connection failed
// otherwise than closed by the primary (a signature that does not verify,
// no answer in the timeout), where a new one would not have. RFC 7766
// has every server take a connection's further queries, and Knot, BIND,
// NSD and miekg/dns's server (the stock transfer plugin's) do; this is
// for one that does not, so that it costs one transfer run twice.
func (p *idleConns) freshOnly(primary string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.fresh[primary] {
		return false
	}
	p.fresh[primary] = true
	closeIdle(p.by[primary])
	delete(p.by, primary)
	return true
}

// closeIdle closes the connections of cs whose timers have not closed
// them already; the caller holds the pool's lock and drops cs.
func closeIdle(cs []*idleConn) {
	for _, c := range cs {
		if c.timer.Stop() {
			c.conn.Close()
		}
	}
}

// closedByPeer reports whether err tells of a connection the primary
// closed: an idle one it gave up on (its own idle timeout, its limit of
// queries a connection) before or as it was taken.
func closedByPeer(err error) bool {
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE)
}

func timedOut(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
