package codel

import (
	"encoding/binary"
	"net/netip"
	"sync"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Datagrams move in batches: one recvmmsg takes up to a batch of queries
// off the socket, and one sendmmsg sends the answers a worker wrote since
// it last had nothing to do. On loopback a sendto costs several times a
// recvfrom (the sender's system call carries the packet through the stack
// and wakes the receiver); one per answer was a third of the server's CPU
// (bench/README.md).

// mmsghdr is the kernel's struct mmsghdr. Go lays it out as C does on
// every Linux architecture: a msghdr, then the length, padded to the
// msghdr's alignment.
type mmsghdr struct {
	hdr unix.Msghdr
	n   uint32
}

// oobSize holds an IP_PKTINFO or IPV6_PKTINFO control message and a
// receive time.
const oobSize = 128

// inbox is where one reader's recvmmsg puts a batch: a buffer, an address
// and room for a control message per datagram. Its buffers stay: a queued
// query keeps a copy of its datagram (packetbuf.go).
type inbox struct {
	bufs  [batch]*[]byte
	hdrs  [batch]mmsghdr
	iovs  [batch]unix.Iovec
	names [batch]unix.RawSockaddrInet6
	oobs  [batch][oobSize]byte
	// used is how many headers the last read used: the kernel changes
	// only those of the datagrams it fills (their address's and control
	// message's lengths, their flags), so a read sets those again, one
	// for a query that came alone rather than the batch's 32. set: every
	// header is set, with room for control messages as every says.
	used  int
	set   bool
	every int // control messages for every datagram (1), for the first and each every-th after it, or none (0)
}

// read takes up to a batch of datagrams off fd without waiting, and
// returns how many. The control messages (the address a datagram came to,
// the time it arrived) are asked for those every picks (hasControl): the
// kernel writes none for a header without room for them.
func (in *inbox) read(fd uintptr, every int) (int, error) {
	if !in.set || every != in.every {
		in.setAll(every)
	}
	for i := range in.used {
		h := &in.hdrs[i].hdr
		h.Namelen = unix.SizeofSockaddrInet6
		if hasControl(i, every) {
			h.SetControllen(oobSize)
		}
		h.Flags = 0
	}
	n, err := recvmmsg(fd, in.hdrs[:])
	in.used = n // a failed call changes none
	return n, err
}

// hasControl says whether datagram i of a read with control messages for
// every every-th is read with them.
func hasControl(i, every int) bool { return every > 0 && i%every == 0 }

// setAll points every header at its buffer, address and control room (the
// headers every picks), and marks them all used, so that read sets their
// lengths.
func (in *inbox) setAll(every int) {
	for i := range in.hdrs {
		if in.bufs[i] == nil {
			in.bufs[i] = packets.Get().(*[]byte)
		}
		b := *in.bufs[i]
		in.iovs[i].Base = &b[0]
		in.iovs[i].SetLen(len(b))
		h := &in.hdrs[i].hdr
		h.Name = (*byte)(unsafe.Pointer(&in.names[i]))
		h.Iov = &in.iovs[i]
		h.SetIovlen(1)
		h.Control, h.Controllen = nil, 0
		if hasControl(i, every) {
			h.Control = &in.oobs[i][0]
		}
	}
	in.used, in.set, in.every = batch, true, every
}

// take returns datagram i of the last read, in the inbox's buffer until
// the next read (packet.hold copies it), its source and its control
// message.
func (in *inbox) take(i int) (b []byte, from netip.AddrPort, oob []byte) {
	h := &in.hdrs[i]
	return (*in.bufs[i])[:h.n], fromRaw(&in.names[i]), in.oobs[i][:h.hdr.Controllen]
}

// outbox holds a worker's answers until it flushes them in one sendmmsg.
// Another goroutine may write an answer for a query the worker started
// (alias sends a lookup away and answers later): mu keeps the two apart.
type outbox struct {
	mu    sync.Mutex
	r     *reader // whose socket the held answers go out of (add)
	n     int
	first int64 // when the first held answer was added (codel's clock)
	bufs  [batch][]byte
	hdrs  [batch]mmsghdr
	iovs  [batch]unix.Iovec
	names [batch]unix.RawSockaddrInet6
	oobs  [batch][]byte
	sent  int                   // what send has sent of the held answers
	end   int                   // what a sendmmsg sends up to, from sent (send)
	err   error                 // the last sendmmsg's error
	full  bool                  // the last sendmmsg without a wait found the socket's buffer full (EAGAIN)
	write func(fd uintptr) bool // sendmmsg, bound
	try   func(fd uintptr)      // sendmmsg without a wait, bound

	qnames nameRoom // the names of the questions its worker reads; that worker's alone, without mu

	// idled: the worker flushed for want of queries (Flush; or the
	// queue's stall check did, inside a long query: rare) since its last
	// query, taken at taken; eager: how many answers from now on go out
	// eagerAt at a time (before).
	idled bool
	taken int64
	eager int
}

// eagerAt is how many answers the outbox holds at most for a while after
// its worker came back from an idle of maxHold or more.
//
// An idle worker's queries come in bursts as often as not (a client's
// timer, a resolver farm behind one address), and a burst queued at
// once was answered all at its end: at 20,000 q/s, in bursts of about 22
// (loadgen's), the median answer waited 0.106 ms against Knot's 0.06 to
// 0.07, which reads and answers 10 at a time. Eight at a time took it to
// 0.086 to 0.090 (bench/README.md); at saturation, where a worker never
// idles, the hold is as it was (sending 8 at a time there cost 6%).
const eagerAt = 8

// add holds a copy of b, an answer to to from src (on a wildcard socket),
// and sends what is held when the batch is full or goes to another
// address. Answers to queries read by readers of one address go out
// together, through the socket of the first held: each socket is bound to
// that address and port, so which one sends is nothing a client sees, and
// a worker serving queries from several keeps its batch. Called with mu
// held.
func (o *outbox) add(r *reader, b []byte, to netip.AddrPort, src netip.Addr) {
	if o.n == batch || (o.r != nil && o.r.first != r.first) {
		o.send()
	}
	if o.r == nil {
		o.r = r
	}
	i := o.n
	if i == 0 {
		o.first = r.c.now()
	}
	o.n++
	o.bufs[i] = append(o.bufs[i][:0], b...)
	o.iovs[i].Base = unsafe.SliceData(o.bufs[i])
	o.iovs[i].SetLen(len(b))
	h := &o.hdrs[i].hdr
	h.Name = (*byte)(unsafe.Pointer(&o.names[i]))
	h.Namelen = toRaw(&o.names[i], to, r.inet6)
	h.Iov = &o.iovs[i]
	h.SetIovlen(1)
	h.Control, h.Controllen = nil, 0
	if src.IsValid() {
		o.oobs[i] = appendSource(o.oobs[i][:0], src)
		h.Control = &o.oobs[i][0]
		h.SetControllen(len(o.oobs[i]))
	}
	if len(b) == 0 { // Base must point somewhere; nothing is sent from it
		o.iovs[i].Base = &o.names[i].Addr[0]
	}
	if o.eager > 0 {
		o.eager--
		if o.n == eagerAt {
			o.send()
		}
	}
}

// maxHold is how long an answer may wait in an outbox before the worker's
// next query: a query that turns out costly (an online signature, 1 ms and
// more) would otherwise hold every answer before it. Under overload, with
// one query in twenty costing 50 times the others, holding until the batch
// was full put 2.4 ms on the median answer (bench/README.md).
const maxHold = 100 * time.Microsecond

// due sends what is held if the first of it has waited maxHold. Called
// with mu held.
func (o *outbox) due(now int64) {
	if o.n > 0 && now-o.first >= int64(maxHold) {
		o.send()
	}
}

// before is called before each query, taken at taken: the answers held go
// out now if the query may block (a plugin doing I/O), and otherwise once
// they are maxHold old (due). The plugins of a server that recycles its
// queries only compute: a costly one (an online signature) holds them
// while it runs, no longer.
//
// A worker back from an idle of maxHold or more sends the next batch's
// answers eagerAt at a time (eagerAt).
func (o *outbox) before(mayBlock bool, taken int64) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.idled { // a new batch: eager if the idle before it was long
		o.eager = 0
		if taken-o.taken >= int64(maxHold) {
			o.eager = batch
		}
	}
	o.idled, o.taken = false, taken
	if mayBlock {
		o.send()
		return
	}
	o.due(taken)
}

// Flush implements codel.Local: the worker has nothing else to do, or the
// queue found it inside one query for long (a plugin that blocks).
func (o *outbox) Flush() {
	o.mu.Lock()
	o.send()
	o.idled = true
	o.mu.Unlock()
}

// send sends what is held. An answer the kernel refuses (a full socket
// buffer that stays full, an unreachable address) is lost, as a UDP
// answer may be: the resolver asks again. Called with mu held.
//
// Each sendmmsg is made through RawConn.Control, which only holds the
// descriptor open, and not through RawConn.Write, which holds its write
// lock: every worker sends out of the same few sockets, and a worker that
// found the lock taken by another's sendmmsg parked until it was given
// back, a goroutine switch and a wake-up for an answer batch; and one
// worker waiting in Write for room on the reader's socket held every
// other's send behind it. On two CPUs a 0.3 s Go trace at saturation
// (176,000 q/s) had 389 such parks, about 1,300 a second; with Control,
// none. The kernel takes concurrent sends on one UDP socket as they
// come. Only where the reader's socket's buffer is full does a send
// wait, through Write, until it is writable.
func (o *outbox) send() {
	if o.write == nil {
		// bound once: a function literal here, and what it sets, escape anew each call
		o.write, o.try = o.sendmmsg, o.trySendmmsg
	}
	o.sent = 0
	if o.n > 0 && o.r.quietRaw != nil {
		// As far as the quiet socket takes them (quiet_linux.go): up to
		// the first to an IPv6 client, which it cannot send to. What it
		// does not take (its buffer full, an answer it refuses) goes out
		// of the reader's socket, as all did before it had one.
		o.end, o.err = o.toIPv4(), nil
		for o.sent < o.end && o.err == nil {
			if err := o.r.quietRaw.Control(o.try); err != nil || o.full {
				break
			}
		}
	}
	o.end = o.n
	for o.sent < o.n {
		o.err = nil
		err := o.r.raw.Control(o.try)
		if err != nil || o.full {
			err = o.r.raw.Write(o.write) // waits for room; fails at once on a closed socket
		}
		if err != nil || o.err != nil {
			o.sent++ // skip the one that failed: the rest may still go
		}
	}
	o.n, o.r = 0, nil
}

// toIPv4 returns how many of the held answers, from the first, go to IPv4
// clients (an IPv6 socket's mapped or not).
func (o *outbox) toIPv4() int {
	for i := range o.n {
		if sa := &o.names[i]; sa.Family == unix.AF_INET6 && !netip.AddrFrom16(sa.Addr).Is4In6() {
			return i
		}
	}
	return o.n
}

// sendmmsg sends what is held from o.sent on, as far as fd takes it, for
// the socket's RawConn.Write: false to wait until fd is writable.
func (o *outbox) sendmmsg(fd uintptr) bool {
	n, err := sendmmsg(fd, o.hdrs[o.sent:o.end])
	if err == unix.EAGAIN {
		return false
	}
	if o.err = err; err == nil {
		o.sent += n
	}
	return true
}

// trySendmmsg is sendmmsg for the socket's RawConn.Control: it notes a
// full buffer rather than waiting for room. full is set on every call, so
// it is read only after a Control that called it.
func (o *outbox) trySendmmsg(fd uintptr) {
	o.full = !o.sendmmsg(fd)
}

// fromRaw returns the address the kernel wrote in sa.
func fromRaw(sa *unix.RawSockaddrInet6) netip.AddrPort {
	port := binary.BigEndian.Uint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:])
	switch sa.Family {
	case unix.AF_INET:
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		return netip.AddrPortFrom(netip.AddrFrom4(sa4.Addr), port)
	case unix.AF_INET6:
		return netip.AddrPortFrom(netip.AddrFrom16(sa.Addr), port)
	}
	return netip.AddrPort{}
}

// toRaw writes to into sa as the socket expects it (inet6: an IPv6 socket,
// which takes an IPv4 address mapped, as Go's own WriteTo sends it) and
// returns its length.
func toRaw(sa *unix.RawSockaddrInet6, to netip.AddrPort, inet6 bool) uint32 {
	if !inet6 {
		sa4 := (*unix.RawSockaddrInet4)(unsafe.Pointer(sa))
		*sa4 = unix.RawSockaddrInet4{Family: unix.AF_INET, Addr: to.Addr().Unmap().As4()}
		binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa4.Port))[:], to.Port())
		return unix.SizeofSockaddrInet4
	}
	*sa = unix.RawSockaddrInet6{Family: unix.AF_INET6, Addr: to.Addr().As16()}
	binary.BigEndian.PutUint16((*[2]byte)(unsafe.Pointer(&sa.Port))[:], to.Port())
	return unix.SizeofSockaddrInet6
}
