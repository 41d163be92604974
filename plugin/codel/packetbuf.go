package codel

import "sync"

// A queued query's packet is copied out of the socket's receive buffer
// (packetSize, kept by the inbox for the next read) into a buffer of its
// size's pool: smallPacket octets for nearly every query, packetSize for
// the rest. A queued query held a whole receive buffer before: 4 KiB for a
// query of 40 to 100 octets, a page for each query in the queue.
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

// warmPackets is how many queued queries' buffers and packets are made,
// and their memory written, when the first reader starts. A fresh server
// offered 80,000 q/s from its first moment shed 9,000 to 15,000 queries in
// its first tenth of a second, and none in later runs: every query that
// queued met a buffer and a packet made anew, on heap pages never touched,
// and on this machine (a PVM guest) a page's first touch is a costly
// fault; the slower the worker went, the longer the queue and the more
// fresh pages it needed. With 4,096 made first (then of 4 KiB each),
// nothing was shed in three runs of three (bench/README.md). With small
// buffers it is about 4.4 MiB, once a process.
const warmPackets = 4096

var warmOnce sync.Once

// warmPools fills the pools of small buffers and of packets with
// warmPackets of each, written through.
func warmPools() {
	warmOnce.Do(func() {
		bufs := make([]*[]byte, warmPackets)
		ps := make([]*packet, warmPackets)
		for i := range bufs {
			bufs[i] = smallPackets.Get().(*[]byte)
			clear(*bufs[i])
			ps[i] = packetPool.Get().(*packet)
			*ps[i] = packet{}
		}
		for i := range bufs {
			smallPackets.Put(bufs[i])
			packetPool.Put(ps[i])
		}
	})
}
