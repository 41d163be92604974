package codel

import (
	"fmt"
	"net"
	"net/netip"
	"slices"
	"testing"
	"time"

	"golang.org/x/net/ipv4"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/raceflag"
	"github.com/ontimedns/ontime/internal/rxstamp"
)

// socketPair is a server socket read and written as the reader does, and a
// client on loopback.
func socketPair(t *testing.T, network, addr string) (*reader, *net.UDPConn) {
	t.Helper()
	conn, err := net.ListenUDP(network, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr)))
	if err != nil {
		t.Skipf("%s: %v", addr, err)
	}
	t.Cleanup(func() { conn.Close() })
	raw, err := conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	client, err := net.ListenUDP(network, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(addr)))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return &reader{c: &Codel{now: codel.Now}, conn: conn, raw: raw, local: conn.LocalAddr(), inet6: network == "udp6"}, client
}

// readAnswer reads one datagram at client, within 5 s, and fails unless it
// is want.
func readAnswer(t *testing.T, client *net.UDPConn, want string) {
	t.Helper()
	buf := make([]byte, 64)
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	if k, err := client.Read(buf); err != nil || string(buf[:k]) != want {
		t.Fatalf("read %q, %v; want %q", buf[:k], err, want)
	}
}

// TestBatchesCarryEveryDatagram: queries read a batch at a time come out
// whole with their sources, and answers held in a worker's outbox (more
// than one batch of them) all reach the client, in order, when it flushes.
func TestBatchesCarryEveryDatagram(t *testing.T) {
	for _, c := range []struct{ network, addr string }{{"udp4", "127.0.0.1:0"}, {"udp6", "[::1]:0"}} {
		t.Run(c.network, func(t *testing.T) {
			r, client := socketPair(t, c.network, c.addr)
			const n = batch + 8
			to := r.conn.LocalAddr().(*net.UDPAddr)
			for i := range n {
				if _, err := client.WriteToUDP(fmt.Appendf(nil, "query %d", i), to); err != nil {
					t.Fatal(err)
				}
			}
			var got []string
			var from netip.AddrPort
			var in inbox
			deadline := time.Now().Add(5 * time.Second)
			for len(got) < n && time.Now().Before(deadline) {
				r.raw.Read(func(fd uintptr) bool {
					k, err := in.read(fd, 0)
					if err != nil || k == 0 {
						return false
					}
					if k > batch {
						t.Fatalf("read %d datagrams, more than a batch", k)
					}
					for i := range k {
						b, src, _ := in.take(i)
						got = append(got, string(b))
						from = src
					}
					return true
				})
			}
			for i := range n {
				if i >= len(got) || got[i] != fmt.Sprintf("query %d", i) {
					t.Fatalf("read %q, want query 0 to %d in order", got, n-1)
				}
			}
			if want := client.LocalAddr().(*net.UDPAddr).AddrPort(); from.Addr().Unmap() != want.Addr().Unmap() || from.Port() != want.Port() {
				t.Fatalf("source %v, want the client's %v", from, want)
			}

			o := new(outbox)
			for i := range n {
				o.mu.Lock()
				o.add(r, fmt.Appendf(nil, "answer %d", i), from, netip.Addr{})
				o.mu.Unlock()
			}
			o.Flush()
			buf := make([]byte, 512)
			client.SetReadDeadline(time.Now().Add(5 * time.Second))
			for i := range n {
				k, err := client.Read(buf)
				if err != nil {
					t.Fatalf("answer %d: %v", i, err)
				}
				if string(buf[:k]) != fmt.Sprintf("answer %d", i) {
					t.Fatalf("answer %d reads %q", i, buf[:k])
				}
			}
		})
	}
}

// TestLateAnswerGoesAtOnce: an answer written after the worker is done
// with its query (alias answers from elsewhere, later) does not wait in
// the worker's outbox, which may not be flushed for a while.
func TestLateAnswerGoesAtOnce(t *testing.T) {
	r, client := socketPair(t, "udp4", "127.0.0.1:0")
	o := new(outbox)
	w := &udpWriter{r: r, to: client.LocalAddr().(*net.UDPAddr).AddrPort(), out: o, done: true}
	if _, err := w.Write([]byte("late")); err != nil {
		t.Fatal(err)
	}
	if o.n != 0 {
		t.Fatal("a late answer was held in the outbox")
	}
	readAnswer(t, client, "late")
}

// TestMappedAddressesOnAnIPv6Socket: an IPv4 client of a dual-stack socket
// is answered at its mapped address.
func TestMappedAddressesOnAnIPv6Socket(t *testing.T) {
	client, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	dual, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv6unspecified})
	if err != nil {
		t.Skip(err)
	}
	raw, _ := dual.SyscallConn()
	r := &reader{c: &Codel{now: codel.Now}, conn: dual, raw: raw, inet6: true}
	defer dual.Close()
	o := new(outbox)
	o.mu.Lock()
	o.add(r, []byte("to v4"), client.LocalAddr().(*net.UDPAddr).AddrPort(), netip.Addr{})
	o.mu.Unlock()
	o.Flush()
	readAnswer(t, client, "to v4")
}

// holdOne returns an outbox holding one answer, "held", added at the
// queue's time start, and the client it goes to.
func holdOne(t *testing.T) (o *outbox, client *net.UDPConn, start int64) {
	r, client := socketPair(t, "udp4", "127.0.0.1:0")
	start = 1_000_000
	r.c.now = func() int64 { return start }
	o = new(outbox)
	o.mu.Lock()
	o.add(r, []byte("held"), client.LocalAddr().(*net.UDPAddr).AddrPort(), netip.Addr{})
	o.mu.Unlock()
	return o, client, start
}

// TestHeldAnswersAreDue: before its next query a worker sends what it has
// held for maxHold, and keeps what is younger for the batch.
func TestHeldAnswersAreDue(t *testing.T) {
	o, client, start := holdOne(t)
	o.mu.Lock()
	defer o.mu.Unlock()
	o.due(start + int64(maxHold)/2)
	if o.n != 1 {
		t.Fatal("an answer younger than maxHold was sent before the batch filled")
	}
	o.due(start + int64(maxHold)*3/2)
	if o.n != 0 {
		t.Fatal("an answer held longer than maxHold was not sent")
	}
	readAnswer(t, client, "held")
}

// TestAnswersGoOutEagerlyAfterAnIdle: a worker that has not idled holds
// its answers as before; one back from an idle of maxHold or more sends
// the answers of its next batch (one read's worth) eagerAt at a time, and
// then holds again; one back from a shorter idle holds.
func TestAnswersGoOutEagerlyAfterAnIdle(t *testing.T) {
	r, client := socketPair(t, "udp4", "127.0.0.1:0")
	now := int64(1_000_000)
	r.c.now = func() int64 { return now }
	to := client.LocalAddr().(*net.UDPAddr).AddrPort()
	o := new(outbox)
	sent := 0
	// serve serves n queries as a worker does, 1 µs apart, and returns
	// what is held after them; flush then sends it, as the worker does
	// when it finds nothing more to do.
	serve := func(n int) int {
		for i := range n {
			o.before(false, now)
			o.mu.Lock()
			o.add(r, fmt.Appendf(nil, "answer %d", sent+i), to, netip.Addr{})
			o.mu.Unlock()
			now += int64(time.Microsecond)
		}
		sent += n
		return o.n
	}
	if held := serve(20); held != 20 {
		t.Fatalf("a busy worker holds %d of 20 answers, want all", held)
	}
	o.Flush()
	now += 2 * int64(maxHold)
	if held := serve(20); held != 20-2*eagerAt {
		t.Fatalf("back from an idle of 2×maxHold, %d of 20 answers held, want %d", held, 20-2*eagerAt)
	}
	o.Flush()
	now += int64(maxHold) / 2
	if held := serve(20); held != 20 {
		t.Fatalf("back from an idle of maxHold/2, %d of 20 answers held, want all", held)
	}
	o.Flush()
	now += 2 * int64(maxHold)
	if held := serve(batch + 8); held != 8 {
		t.Fatalf("back from an idle, %d of %d answers held, want the 8 after a batch's", held, batch+8)
	}
	o.Flush()
	buf := make([]byte, 64)
	client.SetReadDeadline(time.Now().Add(5 * time.Second))
	for i := range sent {
		if k, err := client.Read(buf); err != nil || string(buf[:k]) != fmt.Sprintf("answer %d", i) {
			t.Fatalf("answer %d: read %q, %v", i, buf[:k], err)
		}
	}
}

// TestHeldAnswersGoBeforeAQueryThatMayBlock: before a query whose server
// may block (no Life: a plugin doing I/O), a worker sends what it holds at
// once; before one that only computes, it keeps what is younger than
// maxHold.
func TestHeldAnswersGoBeforeAQueryThatMayBlock(t *testing.T) {
	o, client, start := holdOne(t)
	o.before(false, start+1)
	if o.n != 1 {
		t.Fatal("an answer was sent before a query that only computes")
	}
	o.before(true, start+1)
	if o.n != 0 {
		t.Fatal("an answer was held before a query that may block")
	}
	readAnswer(t, client, "held")
}

// TestArrivalIsTheKernelsStamp: on a socket whose datagrams the kernel
// stamps, a query's arrival is when it reached the socket, not when it was
// read: 50 ms spent unread in the socket's buffer count toward its wait.
// Beside the stamp, the address it came to is still found (a socket bound
// to every address needs both).
func TestArrivalIsTheKernelsStamp(t *testing.T) {
	r, client := socketPair(t, "udp4", "127.0.0.1:0")
	if !rxstamp.Enable(r.raw) {
		t.Skip("the kernel does not stamp datagrams here")
	}
	if err := ipv4.NewPacketConn(r.conn).SetControlMessage(ipv4.FlagDst, true); err != nil {
		t.Fatal(err)
	}
	// The kernel turns stamping on for the whole stack a moment after the
	// first socket asks (deferred work); until then a datagram is stamped
	// when it is read. So: a few tries.
	var oob []byte
	var now, wall int64
	var waited time.Duration
	for try := 0; try < 5 && waited < 45*time.Millisecond; try++ {
		if _, err := client.WriteToUDP([]byte("stamped query"), r.conn.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		var in inbox
		oob = nil
		deadline := time.Now().Add(5 * time.Second)
		for oob == nil && time.Now().Before(deadline) {
			r.raw.Read(func(fd uintptr) bool {
				k, err := in.read(fd, 1)
				if err != nil || k == 0 {
					return false
				}
				_, _, oob = in.take(0)
				return true
			})
		}
		now, wall = codel.Now(), time.Now().UnixNano()
		waited = time.Duration(now - arrivedAt(now, wall, oob))
	}
	if waited < 45*time.Millisecond || waited > 5*time.Second {
		t.Errorf("arrival %v before it was read, want the 50 ms it waited unread", waited)
	}
	if dst := destination(oob); dst != netip.MustParseAddr("127.0.0.1") {
		t.Errorf("destination %v beside the stamp, want 127.0.0.1", dst)
	}
	// Without a stamp, or with one the wall clock no longer agrees with,
	// the arrival is when it was read.
	if got := arrivedAt(now, wall, nil); got != now {
		t.Errorf("no stamp: arrival %d, want now (%d)", got, now)
	}
	if got := arrivedAt(now, wall-int64(time.Minute), oob); got != now {
		t.Errorf("a stamp from after the clock: arrival %d, want now (%d)", got, now)
	}
}

// TestSendAndFeedAllocateNothing: the system calls of a batch, sending
// held answers and reading queries, allocate nothing once the outbox and
// the inbox have grown (RawConn's callbacks, made anew each call, would
// escape to the heap with what they set).
func TestSendAndFeedAllocateNothing(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	r, client := socketPair(t, "udp4", "127.0.0.1:0")
	r.feedRaw = r.raw
	r.c.q = codel.New(codel.Config{Workers: 1})
	defer r.c.q.Close()
	to := client.LocalAddr().(*net.UDPAddr).AddrPort()
	o := new(outbox)
	send := func() {
		o.mu.Lock()
		for range 4 {
			o.add(r, []byte("an answer"), to, netip.Addr{})
		}
		o.mu.Unlock()
		o.Flush()
	}
	send()
	if n := testing.AllocsPerRun(200, send); n != 0 {
		t.Errorf("sending a batch: %v allocations", n)
	}
	// An empty socket: a feed that finds nothing reads nothing.
	r.feed()
	if n := testing.AllocsPerRun(200, func() { r.feed() }); n != 0 {
		t.Errorf("feeding from an empty socket: %v allocations", n)
	}
}

// TestReadSetsAgainTheHeadersItUsed: the kernel shortens the address and
// control-message lengths of the headers a read fills; the next read sets
// those again (and only those), so that a datagram from another client,
// read into the same header, comes with its own source and its control
// message whole.
func TestReadSetsAgainTheHeadersItUsed(t *testing.T) {
	r, a := socketPair(t, "udp4", "127.0.0.1:0")
	if err := ipv4.NewPacketConn(r.conn).SetControlMessage(ipv4.FlagDst, true); err != nil {
		t.Fatal(err)
	}
	b, err := net.ListenUDP("udp4", net.UDPAddrFromAddrPort(netip.MustParseAddrPort("127.0.0.1:0")))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var in inbox
	readOne := func(client *net.UDPConn) {
		t.Helper()
		if _, err := client.WriteToUDP([]byte("query"), r.conn.LocalAddr().(*net.UDPAddr)); err != nil {
			t.Fatal(err)
		}
		var from netip.AddrPort
		var oob []byte
		for deadline := time.Now().Add(5 * time.Second); !from.IsValid() && time.Now().Before(deadline); {
			r.raw.Read(func(fd uintptr) bool {
				if k, err := in.read(fd, 1); err == nil && k == 1 {
					_, from, oob = in.take(0)
				}
				return true
			})
		}
		want := client.LocalAddr().(*net.UDPAddr).AddrPort()
		if from.Addr().Unmap() != want.Addr() || from.Port() != want.Port() {
			t.Fatalf("source %v, want %v", from, want)
		}
		if dst := destination(oob); dst != netip.MustParseAddr("127.0.0.1") {
			t.Fatalf("destination %v from the control message, want 127.0.0.1", dst)
		}
		// As the kernel could leave them for a shorter address and
		// fewer control messages.
		in.hdrs[0].hdr.Namelen, in.hdrs[0].hdr.Controllen = 0, 0
	}
	readOne(a)
	readOne(b)
	readOne(a)
}

// TestAReadGivesRoomForControlWhereAsked: a read with a control message
// for every eighth datagram gets the kernel's stamp for the first and the
// ninth of a batch of ten, and none for the others; the same inbox read
// for every datagram again (a socket bound to every address) gets each
// its own.
func TestAReadGivesRoomForControlWhereAsked(t *testing.T) {
	r, client := socketPair(t, "udp4", "127.0.0.1:0")
	if !rxstamp.Enable(r.raw) {
		t.Skip("the kernel does not stamp datagrams here")
	}
	var in inbox
	readTen := func(every int) (stamped []int) {
		t.Helper()
		for range 10 {
			if _, err := client.WriteToUDP([]byte("query"), r.conn.LocalAddr().(*net.UDPAddr)); err != nil {
				t.Fatal(err)
			}
		}
		time.Sleep(20 * time.Millisecond) // all ten in the socket's buffer
		var k int
		r.raw.Read(func(fd uintptr) bool {
			var err error
			k, err = in.read(fd, every)
			return err == nil
		})
		if k != 10 {
			t.Fatalf("read %d datagrams in one batch, want 10", k)
		}
		for i := range k {
			if _, _, oob := in.take(i); len(oob) > 0 {
				if _, ok := rxstamp.Received(oob); !ok {
					t.Fatalf("datagram %d: a control message without a stamp", i)
				}
				stamped = append(stamped, i)
			}
		}
		return stamped
	}
	if got := readTen(stampEvery); !slices.Equal(got, []int{0, 8}) {
		t.Errorf("every %d: datagrams %v came with a stamp, want 0 and 8", stampEvery, got)
	}
	if got := readTen(1); len(got) != 10 {
		t.Errorf("every one: datagrams %v came with a stamp, want all ten", got)
	}
	if got := readTen(0); len(got) != 0 {
		t.Errorf("none: datagrams %v came with a stamp", got)
	}
}
