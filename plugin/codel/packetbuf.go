package codel

// A queued query's packet is copied out of the socket's receive buffer
// (packetSize, kept by the inbox for the next read) into room of
// smallPacket octets in the packet itself, which nearly every query fits,
// or into a buffer of packetSize from the pool for the rest. (The room was
// a buffer of a pool of its own before: a get and a put a query.) A
// queued query held a whole receive buffer before: 4 KiB for a
// query of 40 to 100 octets, a page for each query in the queue. A fresh
// server offered 80,000 q/s from its first moment shed 9,000 to 15,000
// queries in its first tenth of a second, and none in later runs: every
// query that queued then met a buffer made anew, on a heap page never
// touched, and on this machine (a PVM guest) a page's first touch is a
// costly fault; the slower the worker went, the longer the queue and the
// more fresh pages it needed. With small buffers, eight to a page, nothing
// was shed in three runs of three (bench/README.md).
const smallPacket = 512

// hold copies the datagram b into p: into the packet's own room where it
// fits (nearly every query), so that it comes and goes with the packet,
// or into a buffer of packetSize from the pool.
func (p *packet) hold(b []byte) {
	if len(b) <= smallPacket {
		p.roomBuf = p.room[:]
		p.buf = &p.roomBuf
	} else {
		p.buf = packets.Get().(*[]byte)
	}
	p.n = copy(*p.buf, b)
}

// release gives back the buffer that holds the datagram where it is the
// pool's; the packet's own room stays with it.
func (p *packet) release() {
	if p.buf != &p.roomBuf {
		packets.Put(p.buf)
	}
}
