package codel

import "sync"

// A queued query's packet is copied out of the socket's receive buffer
// (packetSize, kept by the inbox for the next read) into a buffer of its
// size's pool: smallPacket octets for nearly every query, packetSize for
// the rest. A queued query held a whole receive buffer before: 4 KiB for a
// query of 40 to 100 octets, a page for each query in the queue. A fresh
// server offered 80,000 q/s from its first moment shed 9,000 to 15,000
// queries in its first tenth of a second, and none in later runs: every
// query that queued then met a buffer made anew, on a heap page never
// touched, and on this machine (a PVM guest) a page's first touch is a
// costly fault; the slower the worker went, the longer the queue and the
// more fresh pages it needed. With small buffers, eight to a page, nothing
// was shed in three runs of three (bench/README.md).
const smallPacket = 512

var smallPackets = sync.Pool{New: func() any { b := make([]byte, smallPacket); return &b }}

// packetCopy returns a pooled buffer holding a copy of b.
func packetCopy(b []byte) *[]byte {
	pool := &smallPackets
	if len(b) > smallPacket {
		pool = &packets
	}
	buf := pool.Get().(*[]byte)
	copy(*buf, b)
	return buf
}

// releasePacket gives buf back to the pool of its size.
func releasePacket(buf *[]byte) {
	if cap(*buf) == smallPacket {
		smallPackets.Put(buf)
		return
	}
	packets.Put(buf)
}
