package codel

import (
	"context"
	"net"
	"net/netip"
	"runtime/debug"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics/vars"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/chain"
)

// Codel hands UDP queries to its queue; a worker runs the rest of the chain.
type Codel struct {
	Next   plugin.Handler
	q      *codel.Queue
	drop   int  // the rcode a dropped query is answered with, or dropSilent
	socket bool // read the servers' UDP sockets too (reader.go)
	// ownTCP: take the servers' TCP connections on listeners of its own
	// (tcplisten.go), where socket is on too.
	ownTCP  bool
	sockets int          // sockets of codel's own on each address, a reader each (attach)
	now     func() int64 // the queue's clock
	server  string
	readers atomic.Pointer[[]*reader] // those reading now; none once stopped
	// counted are every reader it started, stopped ones too: what they
	// read stays in socket_reads_total (socketReads).
	counted atomic.Pointer[[]*reader]
	// tcp are its TCP listeners (tcplisten.go), tcpAccepts the
	// connections they took.
	tcp        tcpListeners
	tcpAccepts atomic.Uint64
}

// attach starts reading the UDP socket of s. It is CoreDNS's
// UDPDecorateWriterFunc, called once per socket as the server starts.
//
// Where the first reader has a socket of codel's own, it opens more
// beside it on the same address (SO_REUSEPORT), c.sockets in all, each
// with its reader and that reader's attendant: the kernel spreads the
// clients over them by their addresses and ports. One socket, read by
// one goroutine at a time, answered no more on 8 CPUs than on one (about
// 125,000 queries a second on a 16-CPU machine, bench/README.md): every
// query went through that socket's read and its attendant. Their answers
// go out of any of them (outbox.add), and their queries wait in the one
// queue.
func (c *Codel) attach(s *dnsserver.Server) {
	if !c.socket {
		return
	}
	if c.ownTCP {
		c.listenTCP(s)
	}
	r, addr, err := c.readerFor(s)
	if err != nil {
		log.Warningf("reading %s: %v; CoreDNS's reader serves it alone", s.Addr, err)
		return
	}
	c.add(r)
	for n := 1; r.undo != nil && n < c.sockets; n++ {
		more, err := newReader(c, s, addr, r)
		if err != nil {
			log.Warningf("reading %s: %v; %d socket(s) of codel's own", s.Addr, err, n)
			break
		}
		c.add(more)
	}
}

// add makes r one of the Codel's readers, then starts it: it reads
// nothing that socketReads does not count, and a stop that comes first
// finds it (close waits for its goroutine, which a closed socket or
// queue ends at once).
func (c *Codel) add(r *reader) {
	appendReader(&c.counted, r)
	appendReader(&c.readers, r)
	r.start()
}

// appendReader adds r to the list in p, a new list for those reading it.
func appendReader(p *atomic.Pointer[[]*reader], r *reader) {
	for {
		old := p.Load()
		var next []*reader
		if old != nil {
			next = append(next, *old...)
		}
		next = append(next, r)
		if p.CompareAndSwap(old, &next) {
			return
		}
	}
}

// readerFor finds the socket of s and reads it, and returns the address it
// is bound to. A server without bind listens on ":PORT", and one bound to
// 0.0.0.0 on "0.0.0.0:PORT"; for both Go opens a dual-stack socket bound
// to [::]:PORT (net's favoriteAddrFamily), or 0.0.0.0:PORT where IPv6 is
// off.
func (c *Codel) readerFor(s *dnsserver.Server) (*reader, netip.AddrPort, error) {
	hostport := strings.TrimPrefix(s.Addr, "dns://")
	if strings.HasPrefix(hostport, ":") {
		hostport = "0.0.0.0" + hostport
	}
	addr, err := netip.ParseAddrPort(hostport)
	if err != nil {
		return nil, addr, err
	}
	if addr.Addr() == netip.IPv4Unspecified() {
		dual := netip.AddrPortFrom(netip.IPv6Unspecified(), addr.Port())
		if r, err := newReader(c, s, dual, nil); err == nil {
			return r, dual, nil
		}
	}
	r, err := newReader(c, s, addr, nil)
	return r, addr, err
}

// feed is the queue's Feed: a worker, before its next query, queues what
// has arrived on one of the sockets, the next in its turn, or after it
// the first that no other worker is feeding. Reading every socket each
// time would be a system call for each, most finding nothing at a light
// load; under load each is read by a worker every few microseconds, and
// each worker in turn reads them all. A worker whose turn fell on a
// socket another was feeding would read nothing, and might find the
// queue empty and park while the other sockets held queries. The socket
// of next, the reader whose wait the worker goes to, is passed by: that
// wait reads it first.
func (c *Codel) feed(turn int, next codel.Source) {
	rs := c.readers.Load()
	if rs == nil {
		return
	}
	n := uint(len(*rs))
	for i := range n {
		if r := (*rs)[(uint(turn)+i)%n]; codel.Source(r) != next && r.feed() {
			return
		}
	}
}

// stop retires the readers (no more queries come to them), drains the
// queue, answering out of their sockets, then closes them.
func (c *Codel) stop() {
	c.stopTCP()
	rs := c.readers.Swap(nil)
	if rs != nil {
		for _, r := range *rs {
			r.retire()
		}
	}
	c.q.Close()
	if rs != nil {
		for _, r := range *rs {
			r.close()
		}
	}
}

// socketReads returns how many packets the readers took off the sockets,
// stopped ones included.
func (c *Codel) socketReads() uint64 {
	var n uint64
	if rs := c.counted.Load(); rs != nil {
		for _, r := range *rs {
			n += r.reads.Load()
		}
	}
	return n
}

// ServeDNS implements plugin.Handler. Over UDP it queues the query and
// returns at once: the packet's goroutine ends, and the worker writes the
// answer (miekg/dns does nothing with a UDP writer after the handler
// returns). Over TCP, where each connection has its own goroutine and no
// query waits behind another's, the chain runs in place; a plugin that
// suspends work (Hop.Suspend) still has it checked against the deadline.
func (c *Codel) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if hop, ok := codel.FromContext(ctx); ok && hop.Queue == c.q {
		// Read off the socket by this plugin and taken by a worker: go on.
		return chain.Next(pluginName, c.Next, ctx, w, r)
	}
	arrival := c.now()
	if _, udp := w.RemoteAddr().(*net.UDPAddr); !udp {
		return chain.Next(pluginName, c.Next, codel.NewContext(ctx, codel.Hop{Arrival: arrival}), w, r)
	}
	if ctx.Done() != nil {
		// A plugin before this one (cancel, timeouts) cancels ctx when
		// ServeDNS returns, which is now, long before the worker runs.
		ctx = context.WithoutCancel(ctx)
	}
	c.q.Submit(&query{c: c, ctx: ctx, w: w, r: r, arrival: arrival}, arrival)
	return dns.RcodeSuccess, nil
}

// Name implements plugin.Handler.
func (c *Codel) Name() string { return pluginName }

// Deadline is the queue's: a plugin after this one that sends work
// elsewhere (alias) drops it past the same deadline.
func (c *Codel) Deadline() time.Duration { return c.q.Config().Deadline }

// query is a queued UDP query: a codel.Task.
type query struct {
	c       *Codel
	ctx     context.Context
	w       dns.ResponseWriter
	r       *dns.Msg
	arrival int64
}

// Run serves the query on a worker, as CoreDNS's server would have on the
// packet's goroutine: an rcode the chain did not write is written here,
// and a panic is answered with SERVFAIL and logged, not fatal.
func (q *query) Run() {
	defer func() {
		if rec := recover(); rec != nil {
			log.Errorf("Recovered from panic in the chain after codel: %v\n%s", rec, debug.Stack())
			vars.Panic.Inc()
			q.reply(dns.RcodeServerFailure)
		}
	}()
	ctx := codel.NewContext(q.ctx, codel.Hop{Queue: q.c.q, Arrival: q.arrival})
	rcode, _ := chain.Next(pluginName, q.c.Next, ctx, q.w, q.r)
	if !plugin.ClientWrite(rcode) {
		q.reply(rcode)
	}
}

// Drop answers a dropped query as configured: by default not at all, so
// the resolver, which has waited too long already, asks another server.
func (q *query) Drop(codel.Reason) {
	if q.c.drop != dropSilent {
		q.reply(q.c.drop)
	}
}

func (q *query) reply(rcode int) { q.w.WriteMsg(errorAnswer(q.w, q.r, rcode)) }
