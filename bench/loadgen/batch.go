package main

import (
	"encoding/binary"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/net/ipv4"
)

// The batched closed loop (-batch N with -inflight W): each of -sockets
// sockets keeps its share of W queries outstanding, sending and reading up
// to N at a time with sendmmsg and recvmmsg. dnsperf sends and reads one
// datagram a system call; on this project's 2-CPU machine it needed all of
// its CPU, about 8 µs a query, to keep one server core busy, so that a
// one-core measure was its rate, not the server's. Here the system calls
// are shared by a batch, and a query costs this tool what the kernel's
// loopback path costs it. An answer's latency is taken when its batch is
// read (not the kernel's stamp): at saturation the figure is queries a
// second, the latency a closed loop's.

// batchLoop is one socket's share of the batched closed loop.
type batchLoop struct {
	c       *net.UDPConn
	pc      *ipv4.PacketConn
	window  int
	sent    [65536]int64 // send time of ID i (ns since start); 0: answered, given up or unused
	next    uint16       // the next ID to send
	oldest  uint16       // the oldest ID that may still be outstanding
	out     int          // queries outstanding
	queries int64        // sent
	answers int64
	onTime  int64 // answered within the deadline
	counts  [dns.RcodeBadCookie + 1]int64
	nodata  int64
	// stopped is when the loop stopped sending, and last when its last
	// answer came (ns since start): the run's length is the later of
	// them, not the drain's end (runBatched).
	stopped, last int64
}

// runBatched runs the batched closed loop for duration and returns its
// result. Bounded by duration and maxQ; a query unanswered after wait is
// given up on and its place taken by a new one.
func runBatched(raddr *net.UDPAddr, qs []query, inflight, batch, sockets, maxQ int, duration, wait, deadline time.Duration, hist *histogram) (result, error) {
	sockets = max(1, min(sockets, inflight))
	loops := make([]*batchLoop, sockets)
	for i := range loops {
		c, err := net.DialUDP("udp", nil, raddr)
		if err != nil {
			return result{}, err
		}
		c.SetReadBuffer(4 << 20)
		c.SetWriteBuffer(4 << 20)
		w := inflight / sockets
		if i < inflight%sockets {
			w++
		}
		loops[i] = &batchLoop{c: c, pc: ipv4.NewPacketConn(c), window: min(w, 65535)}
	}
	var (
		wg    sync.WaitGroup
		total atomic.Int64 // queries sent by all, against maxQ
	)
	start := time.Now()
	end := start.Add(duration)
	for i, l := range loops {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.run(qs, i, batch, int64(maxQ), &total, start, end, wait, deadline, hist)
		}()
	}
	wg.Wait()
	// The run lasted until the loops stopped sending, or their last
	// answers came if later: not until each loop's drain ended. A loop
	// with one query lost drains for wait (a second by default) before it
	// gives up on it, and counting that second made the rate of a server
	// that lost one query in a run a ninth lower over an 8 s run (Knot's
	// socket drops a few under a burst; ontime's loses none: the peer
	// table's q/s favoured ontime until 2026-12-05, bench/README.md).
	var ran int64
	for _, l := range loops {
		ran = max(ran, l.stopped, l.last)
	}
	secs := float64(ran) / 1e9
	if ran == 0 {
		secs = time.Since(start).Seconds()
	}
	r := result{Seconds: secs}
	for _, l := range loops {
		l.c.Close()
		r.Sent += l.queries
		r.Answered += l.answers
		r.OnTime += l.onTime
		r.ServFail += l.counts[dns.RcodeServerFailure]
		r.Refused += l.counts[dns.RcodeRefused]
		r.NXDomain += l.counts[dns.RcodeNameError]
		r.NoData += l.nodata
	}
	r.Offered = float64(r.Sent) / secs
	r.Unanswered = r.Sent - r.Answered
	return r, nil
}

// run is one socket's loop: fill the window, read what came back, give up
// on what waited past wait, until end.
func (l *batchLoop) run(qs []query, first, batch int, maxQ int64, total *atomic.Int64, start, end time.Time, wait, deadline time.Duration, hist *histogram) {
	out := make([]ipv4.Message, batch)
	in := make([]ipv4.Message, batch)
	for i := range out {
		out[i].Buffers = [][]byte{make([]byte, 0, 512)}
		in[i].Buffers = [][]byte{make([]byte, 4096)}
	}
	q := first // each socket starts at its own place in the file
	var sweep time.Time
	for {
		now := time.Now()
		if !now.Before(end) {
			l.drain(in, start, wait, deadline, hist)
			return
		}
		if now.After(sweep) {
			// A read waits at most until the next sweep, so that a loop
			// whose queries were all dropped still ends and refills.
			sweep = now.Add(10 * time.Millisecond)
			l.c.SetReadDeadline(sweep)
			l.giveUp(now.Sub(start).Nanoseconds() - wait.Nanoseconds())
		}
		for l.out < l.window {
			n := min(batch, l.window-l.out)
			sum := total.Add(int64(n))
			if sum > maxQ {
				l.drain(in, start, wait, deadline, hist)
				return
			}
			seq := int(sum) - n // every socket's queries numbered apart, for _rand_ names
			t := max(time.Since(start).Nanoseconds(), 1)
			for i := range n {
				if uint16(l.next-l.oldest) == 65535 {
					// Every ID is in use: the oldest, sent 65,535 queries
					// ago and unanswered, gives its place up now.
					if l.sent[l.oldest] != 0 {
						l.sent[l.oldest] = 0
						l.out--
					}
					l.oldest++
				}
				out[i].Buffers[0] = qs[q%len(qs)].packet(out[i].Buffers[0][:0], seq+i, l.next)
				l.sent[l.next] = t
				l.next++
				q++
			}
			sent, err := l.pc.WriteBatch(out[:n], 0)
			if err != nil || sent < n {
				// What did not go out is unanswerable: its IDs are given
				// up on at once.
				for i := max(sent, 0); i < n; i++ {
					l.sent[binary.BigEndian.Uint16(out[i].Buffers[0])] = 0
				}
				n = max(sent, 0)
			}
			l.out += n
			l.queries += int64(n)
			if n == 0 {
				break
			}
		}
		l.read(in, start, deadline, hist)
	}
}

// drain reads the last window's answers, for up to wait, once the loop
// has stopped sending: a query still outstanding then is unanswered.
func (l *batchLoop) drain(in []ipv4.Message, start time.Time, wait, deadline time.Duration, hist *histogram) {
	l.stopped = time.Since(start).Nanoseconds()
	l.c.SetReadDeadline(time.Now().Add(wait))
	for l.out > 0 && l.read(in, start, deadline, hist) {
	}
}

// read takes the answers that have come, up to a batch, waiting for one
// until the socket's read deadline; false when none came (a timeout, or an
// ICMP error).
func (l *batchLoop) read(in []ipv4.Message, start time.Time, deadline time.Duration, hist *histogram) bool {
	got, err := l.pc.ReadBatch(in, 0)
	if err != nil {
		return false
	}
	at := time.Since(start).Nanoseconds()
	for i := range got {
		b := in[i].Buffers[0][:in[i].N]
		if len(b) < 12 || b[2]&0x80 == 0 {
			continue
		}
		id := binary.BigEndian.Uint16(b)
		t := l.sent[id]
		if t == 0 {
			continue // given up on, or not ours
		}
		l.sent[id] = 0
		l.out--
		l.answers++
		l.last = at
		hist.add(at - t)
		if at-t <= deadline.Nanoseconds() {
			l.onTime++
		}
		rc, nodata := answerKind(b)
		l.counts[rc]++
		if nodata {
			l.nodata++
		}
	}
	return true
}

// giveUp frees the places of queries sent before old (ns since start) and
// not answered.
func (l *batchLoop) giveUp(old int64) {
	for l.oldest != l.next {
		t := l.sent[l.oldest]
		if t > old {
			return
		}
		if t != 0 {
			l.sent[l.oldest] = 0
			l.out--
		}
		l.oldest++
	}
}
