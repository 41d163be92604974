package codel

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"os"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/ahead"
	"github.com/ontimedns/ontime/internal/rxstamp"
)

// reader takes UDP queries off the server's socket itself, so that their
// arrival is stamped when they leave the kernel, not when a goroutine
// spawned for them gets to run. CoreDNS's reader loop (one goroutine per
// packet) reads the same socket; under load it is the Go scheduler's
// netpoll that wakes it, every 10 ms or so on a busy P, while packets wait
// in the socket's buffer where no one sees them. Here every worker, before
// it takes its next query, drains what has arrived into the queue (feed),
// and one goroutine blocks on the socket for when the workers are idle
// (attend, or run): the queue CoDel watches is then the one the queries
// are in.
type reader struct {
	c       *Codel
	server  *dnsserver.Server
	conn    *net.UDPConn // run reads it, and answers go out through it
	raw     syscall.RawConn
	feedRaw syscall.RawConn // a second descriptor: run waits holding conn's read lock
	feedCon *net.UDPConn
	undo    func() // gives CoreDNS's socket back (socket_linux.go), if the reader took it
	// first is the first reader opened on the address, itself for that
	// one: the others read sockets of codel's own beside it (Codel.attach),
	// bound to the same address and port, so an answer to a query read by
	// any of them may go out of any (outbox.add).
	first  *reader
	forget func() // the reader's own socket is closed
	local  net.Addr
	// wildcard: the socket is bound to every address, so each answer must
	// go out from the address its query came to (IP_PKTINFO, which
	// miekg/dns turns on for the socket).
	wildcard bool
	inet6    bool // an IPv6 socket: answers to IPv4 clients go to mapped addresses
	// stamped: the kernel stamps each datagram with when it arrived, and a
	// query's arrival is that, not when it was read.
	stamped bool
	// recycle: queries get a Life, and their packets are kept for the
	// next ones (recycle.go).
	recycle bool
	route   *router // nil: every query to the server's ServeDNS
	// questionless answers what it knows of the messages of no question
	// (noquestion.go); nil: each is FORMERR.
	questionless questionless
	runIn        inbox
	feedIn       inbox
	feeding      atomic.Bool
	feedOnce     func(fd uintptr) bool // drainFeed, bound; set and used by the feeding worker
	waitOnce     func(fd uintptr) bool // drainWaited, bound
	// deadlineMu orders the socket's read deadline as Nudge sets it, Wait
	// clears it, and Interrupt sets it for good.
	deadlineMu  sync.Mutex
	interrupted bool
	reads       atomic.Uint64 // packets read here, counted per batch
	// quiet is the socket the reader's answers go out of (quiet_linux.go);
	// nil where there is none (a reader bound to one IPv6 address,
	// CoreDNS's socket shared, another system), and answers go out of
	// conn. It sends to IPv4 clients only.
	quiet    *os.File
	quietRaw syscall.RawConn
	done     chan struct{}
}

const batch = 32 // packets read at most per system call, and answers sent

// packetSize is the largest query read here. Queries are small; 4096
// octets leave room for EDNS options and a TSIG record. A longer datagram
// is cut short by the kernel, fails to unpack and gets FORMERR (miekg/dns's
// own reader takes 512 octets at most).
const packetSize = 4096

// packets are buffers of packetSize: the inbox's receive buffers, and
// those of queued queries too long for a small one (packetbuf.go).
var packets = sync.Pool{New: func() any { b := make([]byte, packetSize); return &b }}

// newReader opens the socket of s, bound to addr, for a reader: CoreDNS's,
// or one of codel's own; with first (a reader opened on addr before), one
// of codel's own beside that reader's, or an error. start starts reading.
func newReader(c *Codel, s *dnsserver.Server, addr netip.AddrPort, first *reader) (*reader, error) {
	conn, feedCon, undo, forget, err := openSockets(addr, first == nil)
	if err != nil {
		return nil, err
	}
	raw, err := conn.SyscallConn()
	if err == nil {
		var feedRaw syscall.RawConn
		if feedRaw, err = feedCon.SyscallConn(); err == nil {
			r := &reader{c: c, server: s, conn: conn, raw: raw, feedCon: feedCon, feedRaw: feedRaw, undo: undo, forget: forget,
				local: conn.LocalAddr(), wildcard: addr.Addr().IsUnspecified(), inet6: addr.Addr().Is6(),
				first: first, done: make(chan struct{})}
			if first == nil {
				r.first = r
			}
			var why string
			if r.recycle, why = recyclable(s); !r.recycle {
				log.Infof("%s: each query allocates its packet and messages: %s", s.Addr, why)
			}
			r.route = routerOf(s)
			r.questionless = questionlessOf(configsOf(s))
			if undo != nil { // CoreDNS's socket, shared, has no SO_REUSEPORT to open one beside it
				r.openQuiet(addr)
			}
			// Only on a socket of codel's own: CoreDNS's reader, on a
			// socket it shares, reads control messages into a buffer with
			// room for the address alone.
			r.stamped = undo != nil && rxstamp.Enable(raw)
			if r.recycle {
				r.waitOnce = r.drainWaited
			}
			return r, nil
		}
	}
	conn.Close()
	feedCon.Close()
	if undo != nil {
		undo()
		forget()
	}
	return nil, err
}

// openQuiet opens the reader's quiet socket. Without one its answers go
// out of its own socket, as they did before there was one.
func (r *reader) openQuiet(addr netip.AddrPort) {
	q, err := quietSocket(addr)
	if err == nil {
		r.quietRaw, err = q.SyscallConn()
		if err != nil {
			q.Close()
		}
	}
	if err != nil {
		if err != errNoQuietPlace {
			log.Infof("%s: answers go out of the socket queries are read from: %v", addr, err)
		}
		return
	}
	r.quiet = q
}

// closeQuiet takes the quiet socket off the address, then closes it:
// answers go out of the reader's own from now on (outbox.send falls back
// where the quiet socket refuses them).
//
// Closing alone did not take it off at once. The quiet socket is
// blocking, and Close of a blocking *os.File does not wait for the
// descriptor's last user: a worker's sendmmsg under way holds it open,
// and the kernel's socket stays bound until that send returns. Retired
// beside a reload's new socket (bound after it, so after it on the
// address's chain), with its reader's socket connected away, it stood
// first on the chain beside [::] and took every query until then, to be
// closed with them unread (TestAQuietSocketUnderASendTakesNoQueryOnceStopped;
// TestCodelAcrossReloads lost a few queries so, 1 run in about 12 beside
// two busy loops). Connected to its own address, it matches no client's
// datagram from the moment connect returns, send or no send.
func (r *reader) closeQuiet() {
	if r.quiet != nil {
		quietAway(r.quiet)
		r.quiet.Close()
	}
}

// start starts the goroutine that waits on the socket. Codel.attach
// calls it once the reader is among the Codel's readers, whose reads the
// metrics sum: one it read before, while attach opened the next socket
// (a /proc walk, long on a loaded machine), came into the sum late, and a
// test that counted its queries found one it had not sent.
func (r *reader) start() {
	if r.recycle {
		go r.attend()
	} else {
		go r.run()
	}
}

// run blocks on the socket and queues what it reads, until the socket is
// closed. It reads until a read comes back short of a batch: the socket
// was empty then, and the next datagram to arrive marks it readable again
// (Go's poller is edge-triggered), so it waits at once rather than after
// one more call that finds nothing.
func (r *reader) run() {
	defer close(r.done)
	r.raw.Read(func(fd uintptr) bool {
		for r.drain(fd, &r.runIn, false) == batch {
		}
		return false // wait for the socket to be readable; Read returns once it is closed
	})
}

// attend serves the queue as the socket's attendant: where the workers
// park, it waits on the socket itself (codel/attend.go), the reader as its
// Source. Only where every plugin only computes (recycle): one that waited
// on the network would leave the socket unwatched meanwhile; there run
// waits.
func (r *reader) attend() {
	defer close(r.done)
	r.c.q.Attend(r)
}

// Wait implements codel.Source: it blocks until the socket has packets
// and queues them, the first ones for the worker waiting; false once the socket
// is closed. A nudge (the read deadline) ends it early, and is cleared.
func (r *reader) Wait() bool {
	err := r.raw.Read(r.waitOnce)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		r.deadlineMu.Lock()
		if !r.interrupted {
			r.conn.SetReadDeadline(time.Time{})
		}
		r.deadlineMu.Unlock()
		return true
	}
	return err == nil
}

// drainWaited is Wait's RawConn.Read function: done once it read some.
func (r *reader) drainWaited(fd uintptr) bool {
	return r.drain(fd, &r.runIn, true) > 0
}

// Nudge implements codel.Source: a read deadline already past ends the
// wait in progress, or the next one.
func (r *reader) Nudge() {
	r.deadlineMu.Lock()
	r.conn.SetReadDeadline(aLongTimeAgo)
	r.deadlineMu.Unlock()
}

// Interrupt implements codel.Source: the deadline stays past, so every
// wait from now on ends at once (the queue is closing).
func (r *reader) Interrupt() {
	r.deadlineMu.Lock()
	r.interrupted = true
	r.conn.SetReadDeadline(aLongTimeAgo)
	r.deadlineMu.Unlock()
}

// aLongTimeAgo is a read deadline that has passed.
var aLongTimeAgo = time.Unix(1, 0)

// feed queues, without waiting, what has arrived on the socket; a worker
// calls it before it takes a query. One worker at a time: feed returns
// false at once where another is feeding, and the caller goes on.
func (r *reader) feed() bool {
	if !r.feeding.CompareAndSwap(false, true) {
		return false
	}
	if r.feedOnce == nil {
		r.feedOnce = r.drainFeed // bound once, as outbox.send's: a literal here escapes anew each call
	}
	r.feedRaw.Read(r.feedOnce)
	r.feeding.Store(false)
	return true
}

// drainFeed drains the feeding descriptor, for its RawConn.Read: again
// while a read comes back full, feedBatches at most.
func (r *reader) drainFeed(fd uintptr) bool {
	for range feedBatches {
		if r.drain(fd, &r.feedIn, false) < batch {
			break
		}
	}
	return true
}

// feedBatches bounds the batches one feed reads. A feed read one, and
// with an attendant waiting only when the queue is empty (under overload
// hardly ever), the socket kept a standing backlog, its freshest queries
// the last to be read: three times the capacity on one CPU then served
// them at a median wait of 9.4 ms against 3.5.
const feedBatches = 8

// drain takes up to a batch of packets off fd into in and submits them,
// each with its arrival time, together. It returns how many it read.
func (r *reader) drain(fd uintptr, in *inbox, taking bool) int {
	every := r.controlEvery()
	n, err := in.read(fd, every)
	if err != nil || n == 0 {
		return 0
	}
	now := r.c.now()
	var wall int64
	if r.stamped {
		wall = time.Now().UnixNano()
	}
	var room [batch]codel.Arrived
	read := room[:0]
	wakes := 0
	stamp := now // the arrival of the last datagram read with its stamp
	for i := range n {
		b, from, oob := in.take(i)
		if r.stamped && hasControl(i, every) {
			stamp = arrivedAt(now, wall, oob)
		}
		if len(b) == 0 && r.isWake(from) {
			wakes++
			continue
		}
		if len(b) < 12 {
			// No DNS header: nothing to answer. Counted, so that every
			// datagram read is served, dropped or counted here.
			r.c.q.Refused(codel.Malformed)
			continue
		}
		arrival := now
		if r.stamped {
			arrival = stamp
		}
		p := packetPool.Get().(*packet)
		p.hold(b)
		p.ctx = packetContext{Context: context.Background(), server: r.server, route: r.route, questionless: r.questionless, hop: codel.Hop{Queue: r.c.q, Arrival: arrival}}
		if r.recycle {
			p.ctx.hop.Life = &p.life
		}
		p.w = udpWriter{r: r, to: from}
		p.w.remote()
		if r.wildcard {
			p.w.src = destination(oob)
		}
		read = append(read, codel.Arrived{Task: p, Arrival: arrival})
	}
	// Counted before they are queued: a worker woken by the submission
	// may answer a query before this goroutine runs again, and a client
	// that then reads the counter must find its query in it.
	r.reads.Add(uint64(n - wakes))
	if taking {
		r.c.q.SubmitAllTaking(r, read)
	} else {
		r.c.q.SubmitAll(read) // the batch under one taking of the queue's lock
	}
	return n
}

// isWake reports whether an empty datagram from is a stolen socket's
// wake-up (wakeStolen), not a client's: it comes from a loopback address
// and this reader's port, where only sockets of this server are bound. A
// retiring reader's own socket, connected to its own address as the stolen
// one is, has the same four-tuple, and the kernel may hand it the wake-up
// (the first of the two on the address's chain): it was counted a
// malformed query, 1 to 3 in 40 reloads between two Corefiles with codel.
func (r *reader) isWake(from netip.AddrPort) bool {
	local, ok := r.local.(*net.UDPAddr)
	return ok && from.Addr().Unmap().IsLoopback() && int(from.Port()) == local.Port
}

// stampEvery is how many datagrams of a batch share one stamp where no
// other control message is needed (a socket bound to one address): the
// first read and each stampEvery-th after it carry theirs, and each of
// the others is taken to have arrived with the last stamped one before
// it, which arrived no later. A wait is then never counted short, and
// counted long by at most the time between those two arrivals, seven
// datagrams apart at most: tens of microseconds saturated, against
// CoDel's 5 ms target. The kernel writes a control message into each
// header with room for one: on one CPU here, a stamp for every datagram
// answered 0.968x the queries a second of no stamp at all, and one in
// eight 0.976x; one in eight answered 1.022x every one (bench/README.md,
// 2026-12-06).
const stampEvery = 8

// controlEvery is which datagrams a read asks control messages for (read):
// every one on a socket bound to every address, whose answers go out from
// the address each came to (and carry the stamp beside it); on a stamped
// one, every stampEvery-th; otherwise none.
func (r *reader) controlEvery() int {
	switch {
	case r.wildcard:
		return 1
	case r.stamped:
		return stampEvery
	}
	return 0
}

// arrivedAt is when a datagram read at now (the queue's clock; wall on the
// Unix clock) arrived, by the kernel's stamp in its control messages: the
// time it waited in the socket's buffer, unseen (behind a collection, or a
// worker busy with a costly query), is part of its sojourn. A stamp later
// than wall, or more than 10 s before it (the wall clock was stepped
// between the two), is not believed.
func arrivedAt(now, wall int64, oob []byte) int64 {
	ts, ok := rxstamp.Received(oob)
	if !ok {
		return now
	}
	if waited := wall - ts; waited >= 0 && waited <= int64(10*time.Second) {
		return now - waited
	}
	return now
}

// retire gives CoreDNS's socket back, so that no query arrives at the
// reader's socket from now on, and queues what has arrived there: the
// queue, closed next, answers it through the socket, which close then
// closes. A reload loses no query to a socket closed with queries in it.
func (r *reader) retire() {
	if r.undo == nil {
		return // CoreDNS's own socket: it goes on reading it
	}
	r.closeQuiet() // before its reader's socket stops listening (quiet_linux.go)
	r.undo()
	for !r.feeding.CompareAndSwap(false, true) {
		runtime.Gosched() // a worker's feed, begun before the readers were taken away
	}
	r.feedRaw.Read(func(fd uintptr) bool {
		for r.drain(fd, &r.feedIn, false) > 0 {
		}
		return true
	})
	r.feeding.Store(false)
}

func (r *reader) close() {
	r.closeQuiet()
	r.conn.Close()
	r.feedCon.Close()
	if r.forget != nil {
		r.forget()
	}
	<-r.done
}

// packetContext is the context a query read here runs under. It carries
// what CoreDNS's server gives every query (the server, the loop count) and
// the codel hop, which also marks the query as queued already: codel's
// ServeDNS, met again in the server's chain, runs it in place. One value
// made with the packet, where context.WithValue would be four allocations.
type packetContext struct {
	context.Context // Background
	server          *dnsserver.Server
	route           *router      // the server's, where it can be read (route.go)
	questionless    questionless // the server's answerer of messages of no question (noquestion.go), or nil
	hop             codel.Hop
}

func (c *packetContext) Value(key any) any {
	switch key.(type) {
	case dnsserver.Key:
		return c.server
	case dnsserver.LoopKey:
		return 0
	case codel.HopKey:
		return &c.hop
	}
	return nil
}

// packet is a query read here, waiting in the queue as raw bytes, with
// everything its way through the chain needs from the reader: its context,
// its writer, the message it unpacks into and its Life. One allocation,
// made again for the next packet unless the query is held (Life).
type packet struct {
	packetState
	// room holds the datagram where it fits (hold); it is left as it is
	// between queries, where the rest is cleared (end).
	room [smallPacket]byte
}

// packetState is a packet's all but its room.
type packetState struct {
	buf     *[]byte // the datagram's buffer: &roomBuf, or the pool's (hold)
	roomBuf []byte  // room[:]
	n       int
	ctx     packetContext
	w       udpWriter
	req     unpacked
	sw      request.ScrubWriter // the server's writer around w, where routed here
	life    codel.Life
	// note and qend are its warming's (warm.go): the Warmer's note, and
	// where the question's name ends in buf (0: not yet read; -1: none).
	note ahead.Note
	qend int
}

// packetPool keeps packets between queries. sync.Pool keeps them per P:
// getting one writes no memory another core uses.
var packetPool = sync.Pool{New: func() any { return new(packet) }}

// RunLocal runs the query on a worker whose answers wait in out until it
// flushes them; an answer written after the query leaves the worker (alias
// answers later) goes out at once. Where the query has no Life, a plugin
// of its server may block on I/O (forward, for one: recycle.go).
func (p *packet) RunLocal(l codel.Local, taken int64) {
	out := l.(*outbox)
	out.before(p.ctx.hop.Life == nil, taken)
	p.ctx.hop.Taken = taken
	p.ctx.hop.Note = &p.note
	p.w.out = out
	if p.ctx.hop.Life != nil {
		// Only where every plugin is known to be done with the query when
		// it returns (recycle.go): a plugin that kept the name (cache, in
		// an answer it stores) would keep its block too.
		p.req.names = &out.qnames
	}
	p.serve()
	out.mu.Lock()
	p.w.done = true
	out.mu.Unlock()
	p.end()
}

// OnlyComputes implements codel.Computing: a query with a Life is served
// by plugins known to finish it in place (recycle.go), none of which waits
// on the network; without one, a plugin of its server may (forward).
func (p *packet) OnlyComputes() bool { return p.ctx.hop.Life != nil }

// Run serves the query.
func (p *packet) Run() {
	p.serve()
	p.end()
}

// serve serves the query and gives its buffer back: what was unpacked from
// it is copied.
func (p *packet) serve() {
	defer p.release()
	serve(&p.ctx, (*p.buf)[:p.n], &p.w, &p.req, &p.sw)
}

// end ends the query's Life, and keeps the packet for the next one, unless
// the query has none (then a plugin may keep its context or writer) or is
// held (its writer is still to be written through).
func (p *packet) end() {
	if p.ctx.hop.Life == nil || p.life.End() {
		return
	}
	p.packetState = packetState{} // nothing kept alive from the pool; the room is octets only
	packetPool.Put(p)
}

// acceptAction is miekg/dns's DefaultMsgAcceptFunc, but for an opcode it
// does not take, in a message of one question: that is accepted, and the
// chain answers it (zonestore with NOTIMP, a plugin that takes the opcode
// as it does). CoreDNS's own server accepts the opcodes its plugins asked
// for (Config.AllowOpcode), a list it keeps to itself.
//
// A message of no question but one more record (its OPT, say) is
// accepted too, where it is otherwise a query, and answered by
// noQuestion: miekg/dns would answer it without the OPT record.
func acceptAction(h dns.Header) dns.MsgAcceptAction {
	action := dns.DefaultMsgAcceptFunc(h)
	if action == dns.MsgRejectNotImplemented && h.Qdcount == 1 {
		return dns.MsgAccept
	}
	if action == dns.MsgReject && h.Qdcount == 0 && h.Arcount > 0 {
		h.Qdcount = 1
		return dns.DefaultMsgAcceptFunc(h)
	}
	return action
}

// serve does what miekg/dns's server does with a packet m (refuse what is
// not a query, FORMERR for what does not unpack), then hands the message
// to CoreDNS's server, whose ServeDNS runs the whole chain under ctx: this
// plugin included, which sees the hop and goes on in place.
func serve(ctx *packetContext, m []byte, w dns.ResponseWriter, u *unpacked, sw *request.ScrubWriter) {
	h := dns.Header{Id: binary.BigEndian.Uint16(m), Bits: binary.BigEndian.Uint16(m[2:]),
		Qdcount: binary.BigEndian.Uint16(m[4:]), Ancount: binary.BigEndian.Uint16(m[6:]),
		Nscount: binary.BigEndian.Uint16(m[8:]), Arcount: binary.BigEndian.Uint16(m[10:])}
	action := acceptAction(h)
	req := &u.msg
	switch action {
	case dns.MsgIgnore:
		return
	case dns.MsgAccept:
		if err := u.unpack(m); err == nil {
			break
		}
		fallthrough
	default: // as miekg/dns: the header echoed, FORMERR or NOTIMP, the question if one unpacked, no other section
		req = new(dns.Msg) // a failed Unpack leaves what it read (FuzzPacketThroughTheChain found it)
		req.Id, req.Opcode = h.Id, int(h.Bits>>11)&0xF
		req.Response, req.RecursionDesired = true, h.Bits&(1<<8) != 0
		req.Rcode = dns.RcodeFormatError
		if action == dns.MsgRejectNotImplemented {
			req.Rcode = dns.RcodeNotImplemented
		}
		// Unpack keeps a question it read whole before what failed (a
		// malformed OPT record, say), and miekg/dns's server echoes it, as
		// Knot does; a question read in part it keeps none of.
		if action == dns.MsgAccept && len(u.msg.Question) == 1 {
			req.Question = []dns.Question{u.msg.Question[0]}
		}
		w.WriteMsg(req)
		return
	}
	if noQuestion(w, req, ctx.questionless) {
		return
	}
	if len(ctx.server.TsigSecret) > 0 {
		if t := req.IsTsig(); t != nil {
			if uw, ok := w.(*udpWriter); ok {
				uw.verify(ctx.server.TsigSecret, m, t)
			}
		}
	}
	if h := ctx.route.route(req); h != nil {
		serveRouted(ctx, h, w, req, sw)
		return
	}
	if badVersion(w, req) { // the router takes none: only the rare query gets here
		return
	}
	ctx.server.ServeDNS(ctx, w, req)
}

// Drop answers as the drop mode says; silent by default.
func (p *packet) Drop(codel.Reason) {
	defer p.end()
	defer p.release()
	if p.w.r.c.drop == dropSilent {
		return
	}
	req := new(dns.Msg)
	if req.Unpack((*p.buf)[:p.n]) != nil || len(req.Question) != 1 || req.Response {
		return
	}
	(&query{c: p.w.r.c, w: &p.w, r: req}).reply(p.w.r.c.drop)
}

// udpWriter answers a packet read here, from the server's own socket:
// through its worker's outbox while the worker runs the query, directly
// otherwise.
type udpWriter struct {
	r     *reader
	to    netip.AddrPort
	src   netip.Addr // the address to answer from, on a wildcard socket
	out   *outbox    // the worker's, while it runs the query
	done  bool       // the worker is done with the query (guarded by out.mu)
	raddr net.UDPAddr
	rip   [16]byte   // raddr.IP's octets
	tsig  *tsigState // a signed query's, nil for the rest
}

// tsigState is what miekg/dns's server keeps of a signed query: whether its
// MAC verified, and the MAC the answer's signature covers.
type tsigState struct {
	secrets    map[string]string // the server's
	status     error
	mac        string
	timersOnly bool
}

// verify checks a signed query's TSIG on its wire form m, with the
// server's secrets, as miekg/dns's reader does before the chain (and the
// tsig plugin, or zonestore for a NOTIFY, reads TsigStatus).
func (w *udpWriter) verify(secrets map[string]string, m []byte, t *dns.TSIG) {
	st := &tsigState{secrets: secrets, mac: t.MAC}
	secret, ok := secrets[t.Hdr.Name]
	if !ok {
		st.status = dns.ErrSecret
	} else {
		st.status = dns.TsigVerify(m, secret, "", false)
	}
	w.tsig = st
}

// remote sets what RemoteAddr returns: plugins ask for it several times
// a query (metrics asks twice), and each net.UDPAddr made would be two
// allocations.
func (w *udpWriter) remote() {
	ip := w.to.Addr()
	if ip.Is4() {
		a := ip.As4()
		w.raddr.IP = append(w.rip[:0], a[:]...)
	} else {
		a := ip.As16()
		w.raddr.IP = append(w.rip[:0], a[:]...)
		w.raddr.Zone = ip.Zone()
	}
	w.raddr.Port = int(w.to.Port())
}

func (w *udpWriter) LocalAddr() net.Addr  { return w.r.local }
func (w *udpWriter) RemoteAddr() net.Addr { return &w.raddr }
func (w *udpWriter) WriteMsg(m *dns.Msg) error {
	var b []byte
	var err error
	if t := m.IsTsig(); t != nil && w.tsig != nil {
		// Signed, as miekg/dns's writer signs: over the query's MAC. An
		// answer that reports an unknown key or a bad signature carries
		// no MAC, and needs no secret.
		secret, ok := w.tsig.secrets[t.Hdr.Name]
		if !ok && t.Error != dns.RcodeBadKey && t.Error != dns.RcodeBadSig {
			return dns.ErrSecret
		}
		b, _, err = dns.TsigGenerate(m, secret, w.tsig.mac, w.tsig.timersOnly)
	} else {
		b, err = m.Pack()
	}
	if err != nil {
		return err
	}
	_, err = w.Write(b)
	return err
}
func (w *udpWriter) Write(b []byte) (int, error) {
	if o := w.out; o != nil {
		o.mu.Lock()
		if !w.done {
			o.add(w.r, b, w.to, w.src)
			o.mu.Unlock()
			return len(b), nil
		}
		o.mu.Unlock()
	}
	if w.src.IsValid() {
		n, _, err := w.r.conn.WriteMsgUDPAddrPort(b, appendSource(nil, w.src), w.to)
		return n, err
	}
	return w.r.conn.WriteToUDPAddrPort(b, w.to)
}
func (w *udpWriter) Close() error { return nil }
func (w *udpWriter) TsigStatus() error {
	if w.tsig != nil {
		return w.tsig.status
	}
	return nil
}
func (w *udpWriter) TsigTimersOnly(b bool) {
	if w.tsig != nil {
		w.tsig.timersOnly = b
	}
}
func (w *udpWriter) Hijack() {}
