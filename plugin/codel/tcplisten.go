package codel

import (
	"bufio"
	"context"
	"encoding/binary"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/miekg/dns"
	"github.com/pires/go-proxyproto"

	"github.com/ontimedns/ontime/internal/ahead"
)

// CoreDNS serves each TCP connection with miekg/dns's loop, which reads a
// query in two system calls (its length, then the message) and writes
// each answer in a third, however many queries the client has pipelined:
// over TCP that was most of the gap to Knot, which reads whatever has
// arrived at once. Read through a buffer, the full chain answered 1.17x
// the queries a second on 8 pipelining connections; with the answers to
// the queries of one read written together, 1.72x that (bench/README.md).
//
// CoreDNS gives a plugin no hook on its listener or its connections, so
// codel opens listeners of its own beside CoreDNS's on the server's
// address (SO_REUSEPORT), one for each CPU, each with SO_INCOMING_CPU set
// to its CPU: since Linux 6.2 the kernel gives a new connection to the
// listener of the CPU that took its SYN where there is one (before, or
// where none matches, it picks by the connection's hash, and CoreDNS's
// listener takes its share, served as before). Their connections are
// served by a miekg/dns server built as CoreDNS builds its own (its
// handler, timeouts, query limit and TSIG secrets), so every query runs
// through CoreDNS's ServeDNS and the whole chain as before; only the reads
// go through a buffer, the queries of a read are warmed together, the
// writes may be held, and the read deadline reaches the connection only
// before a read that waits (bufConn). The TCP
// connection bounds (tcp.go) apply to them as to CoreDNS's, and
// codel_tcp_accepts_total counts what they took. Where a server block
// reads the PROXY protocol (the proxyproto plugin), which they do not,
// none is opened.
type tcpListeners struct {
	mu      sync.Mutex
	stopped bool
	addrs   map[string]bool // host:port served
	servers []*dns.Server
}

// tcpBuffer is the read buffer of a connection: some 40 pipelined queries.
const tcpBuffer = 2048

// listenTCP opens codel's TCP listeners on the address of s, where s is a
// plain DNS server and they are not open yet, and serves them.
func (c *Codel) listenTCP(s *dnsserver.Server) {
	hostport, ok := strings.CutPrefix(s.Addr, "dns://")
	if !ok || !incomingCPU {
		return
	}
	if proxied(s) {
		log.Infof("TCP on %s: the PROXY protocol is read there; CoreDNS's listener serves it", s.Addr)
		return
	}
	t := &c.tcp
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.stopped || t.addrs[hostport] {
		return
	}
	var lns []net.Listener
	for cpu := range possibleCPUs() {
		ln, err := listenOnCPU(hostport, cpu)
		if err != nil {
			for _, l := range lns {
				l.Close()
			}
			log.Warningf("TCP on %s: %v; CoreDNS's listener serves it alone", s.Addr, err)
			return
		}
		lns = append(lns, ln)
	}
	if !steersByCPU() {
		log.Infof("TCP on %s: this kernel spreads connections by their hash, not by CPU (Linux 6.2 does): CoreDNS's listener takes its share", s.Addr)
	}
	if t.addrs == nil {
		t.addrs = map[string]bool{}
	}
	t.addrs[hostport] = true
	limit, coalesce, warmer := tcpLimitOf(c.server), onlyComputes(s), warmerOf(configsOf(s))
	questionless := questionlessOf(configsOf(s))
	// What CoreDNS's Serve puts in each query's context, made once: a
	// context is never changed, and two allocations a query were 3% of
	// the server's time over TCP.
	ctx := context.WithValue(context.Background(), dnsserver.Key{}, s)
	ctx = context.WithValue(ctx, dnsserver.LoopKey{}, 0)
	for _, ln := range lns {
		srv := &dns.Server{
			Listener:      &bufListener{TCPListener: ln.(*net.TCPListener), c: c, limit: limit, coalesce: coalesce, warmer: warmer},
			Net:           "tcp",
			TsigSecret:    s.TsigSecret,
			MsgAcceptFunc: acceptAction,
			MaxTCPQueries: s.MaxTCPQueries,
			ReadTimeout:   s.ReadTimeout,
			WriteTimeout:  s.WriteTimeout,
			IdleTimeout:   func() time.Duration { return s.IdleTimeout },
			// As CoreDNS's Serve hands each query to its server.
			Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
				if !noQuestion(w, r, questionless) && !badVersion(w, r) {
					s.ServeDNS(ctx, w, r)
				}
			}),
		}
		t.servers = append(t.servers, srv)
		go srv.ActivateAndServe()
	}
}

// stopTCP closes the listeners and ends their connections once the query
// each is serving is answered (as CoreDNS's server does when it stops),
// waiting a second at most.
func (c *Codel) stopTCP() {
	t := &c.tcp
	t.mu.Lock()
	t.stopped = true
	servers := t.servers
	t.servers = nil
	t.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for _, srv := range servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// A server whose goroutine has not started yet would not be
			// shut down: its closed listener ends it when it does.
			srv.Listener.Close()
			srv.ShutdownContext(ctx)
		}()
	}
	wg.Wait()
}

// tcpLimitOf returns the connection bounds of server, or nil.
func tcpLimitOf(server string) *tcpLimit {
	tcpLimits.Lock()
	defer tcpLimits.Unlock()
	return tcpLimits.m[server]
}

// bufListener accepts connections for the server of one of codel's
// listeners: counted, refused at the bounds, and read through a buffer.
type bufListener struct {
	*net.TCPListener
	c        *Codel
	limit    *tcpLimit
	coalesce bool         // answers may be held (bufConn), where the chain only computes
	warmer   ahead.Warmer // the server's one Warmer, or nil
}

func (l *bufListener) Accept() (net.Conn, error) {
	for {
		conn, err := l.AcceptTCP()
		if err != nil {
			return nil, err
		}
		l.c.tcpAccepts.Add(1)
		if l.limit != nil && l.limit.refuse(proxyproto.ConnPolicyOptions{Upstream: conn.RemoteAddr(), Downstream: conn.LocalAddr()}) {
			conn.Close()
			continue
		}
		return &bufConn{TCPConn: conn, r: bufio.NewReaderSize(conn, tcpBuffer), coalesce: l.coalesce, limit: l.limit, warmer: l.warmer}, nil
	}
}

// bufConn reads through its buffer, and, where the server's plugins only
// compute (coalesce: onlyComputes), holds the answers to the queries it
// reads until the server's loop comes back for what the client sends
// next, past what the buffer holds: a client that pipelines 40 queries
// gets their answers in one write, where each took a system call of its
// own. The loop serves a query to its end before it reads again, so an
// answer goes out only after its handler returned: one that replay keeps
// is kept before the client can see it, and a query the client sends
// then, on any connection, finds it (over UDP, codel's outbox holds
// answers likewise). Once the loop waits for the client, answers go out
// at once, so that one written then (from another goroutine, later) is
// never held. Where a plugin may wait in place (alias, for its lookup),
// nothing is held: the answers before it would wait with it.
type bufConn struct {
	*net.TCPConn
	r        *bufio.Reader
	coalesce bool
	limit    *tcpLimit    // where it was admitted: released when it closes
	warmer   ahead.Warmer // warms the queries of a read together (warmBatch)

	mu      sync.Mutex
	holding bool
	out     []byte
	writes  int // system calls that wrote, for the tests

	// deadline is the read deadline the server's loop set last, and set
	// the one the connection has; reading: a read of the connection may
	// be under way (SetReadDeadline). Guarded by mu.
	deadline, set time.Time
	reading       bool
}

func (c *bufConn) Read(b []byte) (int, error) {
	var werr error
	fill := c.r.Buffered() == 0
	if fill {
		werr = c.beginRead()
	}
	n, err := c.r.Read(b)
	if fill && n == 2 && c.warmer != nil {
		c.warmBatch(b[:2])
	}
	c.mu.Lock()
	c.reading = false
	c.holding = c.coalesce
	c.mu.Unlock()
	if err == nil {
		err = werr
	}
	return n, err
}

func (c *bufConn) Write(b []byte) (int, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holding {
		c.out = append(c.out, b...)
		return len(b), nil
	}
	c.writes++
	return c.TCPConn.Write(b)
}

// SetReadDeadline keeps t, to give it to the connection before the next
// read that reaches it (beginRead), or at once where one may be under
// way.
//
// miekg/dns's loop sets a read deadline before each message, a clock
// read and the poller's lock and timer moved, 3.5% of the server's time
// over TCP, though a message read from the buffer waits for nothing. The
// connection needs only the deadline the loop set last when a read
// reaches it: so it times out as it did. One set while a read may be
// under way (a shutdown's, in the past, to end it) goes to the
// connection at once.
func (c *bufConn) SetReadDeadline(t time.Time) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.deadline = t
	if !c.reading {
		return nil
	}
	c.set = t
	return c.TCPConn.SetReadDeadline(t)
}

// beginRead writes what is held and gives the connection the deadline
// last set, before a read that reaches it: from here until Read returns,
// an answer written goes out and a deadline set goes to the connection at
// once.
func (c *bufConn) beginRead() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.holding = false
	werr := c.flush()
	c.reading = true
	if !c.deadline.Equal(c.set) {
		c.set = c.deadline
		c.TCPConn.SetReadDeadline(c.deadline)
	}
	return werr
}

// tcpWarmed is how many queries of a read are warmed together.
const tcpWarmed = 32

// warmBatch warms the queries a read just brought, all of them a step at
// a time, as a codel worker warms a hand of UDP queries: over TCP each
// query's kept answer and lookup were read cold, the server's loop
// serving one query at a time, and replay's Find alone took 11% of the
// server's time. length is what the read gave miekg/dns's loop, the first
// query's length; its message and the next ones are in the buffer.
func (c *bufConn) warmBatch(length []byte) {
	buf, _ := c.r.Peek(c.r.Buffered())
	var notes [tcpWarmed]ahead.Note
	var qs [tcpWarmed][]byte
	k, at, next := 0, 0, int(binary.BigEndian.Uint16(length))
	for k < tcpWarmed && at+next <= len(buf) {
		if end := questionEnd(buf[at : at+next]); end > 0 {
			qs[k] = buf[at+headerLen : at+end]
			k++
		}
		at += next
		if at+2 > len(buf) {
			break
		}
		next = int(binary.BigEndian.Uint16(buf[at:]))
		at += 2
	}
	if k < 2 {
		return // one query: nothing to fetch beside it
	}
	for more := true; more; {
		more = false
		for i := range k {
			if notes[i].Step != ahead.Done {
				c.warmer.Warm(&notes[i], qs[i])
				more = more || notes[i].Step != ahead.Done
			}
		}
	}
}

// Close writes what is held, releases the connection from the bounds'
// table, then closes: once its client sees it closed, it may open
// another at once.
func (c *bufConn) Close() error {
	c.mu.Lock()
	c.holding = false
	c.flush()
	limit := c.limit
	c.limit = nil
	c.mu.Unlock()
	if limit != nil {
		limit.release(c.RemoteAddr(), c.LocalAddr())
	}
	return c.TCPConn.Close()
}

// flush writes what is held. c.mu is held.
func (c *bufConn) flush() error {
	if len(c.out) == 0 {
		return nil
	}
	c.writes++
	_, err := c.TCPConn.Write(c.out)
	c.out = c.out[:0]
	if cap(c.out) > 64<<10 {
		c.out = nil // a batch of long answers: not kept for an idle connection
	}
	return err
}
