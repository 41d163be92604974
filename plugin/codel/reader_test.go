package codel

import (
	"fmt"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/sys/unix"

	"github.com/ontimedns/ontime/codel"
)

// TestServersSocketIsStamped: the socket codel reads for a server is its
// own and the kernel stamps its datagrams (Linux), and queries read from
// it are answered.
func TestServersSocketIsStamped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reader runs on Linux")
	}
	ctx, _ := chainServer(t, " codel\n", false)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(ctx.server.Addr, "dns://"))
	if err != nil {
		t.Fatal(err)
	}
	if r := readerOn(t, port); !r.stamped {
		t.Fatalf("codel's socket for %s is not stamped (its own: %v)", r.server.Addr, r.undo != nil)
	}
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	in, err := dns.Exchange(m, net.JoinHostPort("127.0.0.1", port))
	if err != nil || in.Rcode != dns.RcodeRefused {
		t.Fatalf("answer %v, %v; want REFUSED, for a name of no zone here", in, err)
	}
}

// TestOwnSocketHasRoom: codel's own socket asks for a receive buffer of
// receiveBuffer, so that a moment the server does not run is counted by
// CoDel rather than lost in the kernel; it gets that, or the most the
// kernel allows (net.core.rmem_max; the kernel doubles what it grants).
func TestOwnSocketHasRoom(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reader runs on Linux")
	}
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Skip(err)
	}
	most, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, _ := chainServer(t, " codel\n", false)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(ctx.server.Addr, "dns://"))
	if err != nil {
		t.Fatal(err)
	}
	r := readerOn(t, port)
	if r.undo == nil {
		t.Skip("codel shares CoreDNS's socket here")
	}
	var got int
	var serr error
	if err := r.raw.Control(func(fd uintptr) { got, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	if want := 2 * min(receiveBuffer, most); got < want {
		t.Errorf("receive buffer %d octets, want %d (asked %d, rmem_max %d)", got, want, receiveBuffer, most)
	}
}

// socketAndClient opens a UDP socket on 127.0.0.1, with its RawConn, and
// a client connected to it; both are closed when the test ends.
func socketAndClient(t *testing.T) (*net.UDPConn, syscall.RawConn, *net.UDPConn) {
	t.Helper()
	conn, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	raw, err := conn.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	client, err := net.DialUDP("udp", nil, conn.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { client.Close() })
	return conn, raw, client
}

// TestTheSocketsWaitIsNudgedAndInterrupted: the reader as an attendant's
// Source, on a socket of its own. A nudge ends a wait on the socket, and
// is cleared: the next wait ends on a packet, not at once. After
// Interrupt, every wait ends at once.
func TestTheSocketsWaitIsNudgedAndInterrupted(t *testing.T) {
	conn, raw, client := socketAndClient(t)
	read := make(chan struct{}, 1)
	r := &reader{conn: conn, raw: raw}
	r.waitOnce = func(fd uintptr) bool {
		var b [512]byte
		if _, _, err := syscall.Recvfrom(int(fd), b[:], syscall.MSG_DONTWAIT); err != nil {
			return false
		}
		read <- struct{}{}
		return true
	}
	waited := make(chan bool, 1)
	wait := func() { waited <- r.Wait() }
	ended := func(what string) {
		t.Helper()
		select {
		case open := <-waited:
			if !open {
				t.Fatalf("%s: Wait said the socket was closed", what)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: the wait did not end", what)
		}
	}

	go wait()
	r.Nudge()
	ended("a nudge")

	go wait()
	select {
	case <-waited:
		t.Fatal("the wait after a nudge ended at once: the nudge was not cleared")
	case <-time.After(50 * time.Millisecond):
	}
	if _, err := client.Write([]byte("a query")); err != nil {
		t.Fatal(err)
	}
	ended("a packet")
	<-read

	r.Interrupt()
	for i := range 3 {
		go wait()
		ended(fmt.Sprintf("wait %d after Interrupt", i+1))
	}
}

// heldTask holds its worker until let go.
type heldTask struct{ started, let chan struct{} }

func (h heldTask) Run()              { close(h.started); <-h.let }
func (h heldTask) Drop(codel.Reason) {}

// heldCodel returns a Codel whose queue's one worker is held (by a task
// that arrives an hour from now) until the test ends, with a deadline
// every query is past when it is let go: what feeds queue stays queued,
// to be counted, and is then dropped, silently, not served.
func heldCodel(t *testing.T) *Codel {
	c := &Codel{drop: dropSilent, now: codel.Now}
	c.q = codel.New(codel.Config{Workers: 1, Deadline: time.Nanosecond})
	t.Cleanup(c.q.Close)
	held := heldTask{started: make(chan struct{}), let: make(chan struct{})}
	c.q.Submit(held, codel.Now()+int64(time.Hour))
	<-held.started
	t.Cleanup(func() { close(held.let) }) // first of the two: the worker let go, then the queue closed
	return c
}

// TestAFeedReadsWhileReadsComeBackFull: a feed reads the socket again
// while its reads come back full (a batch of 32), so that a backlog in the
// socket, its freshest queries last, reaches the queue at once: 100 queries
// waiting are queued by one feed.
func TestAFeedReadsWhileReadsComeBackFull(t *testing.T) {
	conn, raw, client := socketAndClient(t)
	c := heldCodel(t)
	r := &reader{c: c, conn: conn, feedRaw: raw}

	const queries = 100
	for i := range queries {
		if _, err := client.Write([]byte(fmt.Sprintf("query %05d...", i))); err != nil {
			t.Fatal(err)
		}
	}
	r.feed()
	if n := c.q.Stats().Queued; n != queries {
		t.Fatalf("one feed queued %d of %d queries in the socket", n, queries)
	}
}

// wwwZone is example.org. with one name, www, whose A record answers.
const wwwZone = "$ORIGIN example.org.\n@ 3600 IN SOA ns. host. 1 7200 3600 1209600 3600\n@ 3600 IN NS ns.\nwww 3600 IN A 192.0.2.1\n"

// TestSocketsSpreadTheClients: with sockets 3, codel reads three sockets
// of its own on the server's address, and the kernel spreads clients over
// them by their ports: 60 clients, each from a port of its own, are
// answered, from the server's address and port (a connected client takes
// nothing else), and more than one socket read them.
func TestSocketsSpreadTheClients(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reader runs on Linux")
	}
	r := startServer(t, " codel {\n  sockets 3\n }\n", "", wwwZone, "example.org.")
	if r.undo == nil {
		t.Skip("codel shares CoreDNS's socket here")
	}
	// The readers join one at a time, each as its socket opens.
	for end := time.Now().Add(5 * time.Second); len(*r.c.readers.Load()) < 3 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	var group []*reader
	inodes := map[string]bool{}
	for _, o := range *r.c.readers.Load() {
		if o.first == r {
			group = append(group, o)
			ino, err := inodeOf(o.conn)
			if err != nil {
				t.Fatal(err)
			}
			inodes[ino] = true
		}
	}
	if len(group) != 3 || len(inodes) != 3 {
		t.Fatalf("%d readers on %s, on %d sockets; want 3 of each", len(group), r.server.Addr, len(inodes))
	}
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	for i := range 60 {
		in, err := dns.Exchange(m, r.local.String()) // a socket, and a port, of its own each time
		if err != nil || in.Rcode != dns.RcodeSuccess || len(in.Answer) != 1 {
			t.Fatalf("query %d: answer %v, %v", i, in, err)
		}
	}
	read := 0
	for _, o := range group {
		if o.reads.Load() > 0 {
			read++
		}
	}
	if read < 2 {
		t.Errorf("%d of the 3 sockets read the 60 clients' queries, want them spread", read)
	}
}

// TestAFeedTakesASocketNobodyFeeds: a worker whose turn falls on a socket
// that another worker is feeding feeds the next one instead of nothing.
func TestAFeedTakesASocketNobodyFeeds(t *testing.T) {
	c := heldCodel(t)
	var rs []*reader
	var clients []*net.UDPConn
	for range 3 {
		conn, raw, client := socketAndClient(t)
		rs = append(rs, &reader{c: c, conn: conn, feedRaw: raw})
		clients = append(clients, client)
	}
	c.readers.Store(&rs)
	for _, client := range clients {
		if _, err := client.Write([]byte("a query......")); err != nil {
			t.Fatal(err)
		}
	}
	rs[1].feeding.Store(true) // another worker feeds it
	c.feed(1, nil)
	if n := c.q.Stats().Queued; n != 1 || rs[2].reads.Load() != 1 {
		t.Fatalf("a feed on the turn of a socket being fed queued %d queries, %d from the next socket; want that one", n, rs[2].reads.Load())
	}
	rs[1].feeding.Store(false)
	c.feed(1, nil)
	if n := c.q.Stats().Queued; n != 2 || rs[1].reads.Load() != 1 {
		t.Fatalf("a feed on its turn queued %d in all, %d from its socket; want 2 and 1", n, rs[1].reads.Load())
	}
}

// TestAFeedPassesByTheSocketWaitedOnNext: a worker that goes to wait on a
// reader's socket next (Config.Feed's next), its queue empty, feeds from
// another socket, and from none where that is the only one: its wait
// reads it first.
func TestAFeedPassesByTheSocketWaitedOnNext(t *testing.T) {
	c := heldCodel(t)
	var rs []*reader
	for range 2 {
		conn, raw, client := socketAndClient(t)
		rs = append(rs, &reader{c: c, conn: conn, feedRaw: raw})
		if _, err := client.Write([]byte("a query......")); err != nil {
			t.Fatal(err)
		}
	}
	c.readers.Store(&rs)
	c.feed(0, rs[0])
	if a, b := rs[0].reads.Load(), rs[1].reads.Load(); a != 0 || b != 1 {
		t.Fatalf("a feed on the turn of the socket waited on next read %d there and %d from the other; want 0 and 1", a, b)
	}
	only := rs[:1]
	c.readers.Store(&only)
	c.feed(0, rs[0])
	if n := rs[0].reads.Load(); n != 0 {
		t.Fatalf("a feed read %d from the only socket, which the worker waits on next", n)
	}
	c.feed(0, nil)
	if n := rs[0].reads.Load(); n != 1 {
		t.Fatalf("a feed of a worker that parks next read %d from the only socket, want 1", n)
	}
}

// TestAShortDatagramIsCountedAsMalformed: a datagram too short for a DNS
// header is let go, not queued, and counted among the drops (malformed),
// so that every datagram read is served, dropped, or counted so.
func TestAShortDatagramIsCountedAsMalformed(t *testing.T) {
	conn, raw, client := socketAndClient(t)
	c := heldCodel(t)
	r := &reader{c: c, conn: conn, feedRaw: raw}
	for _, d := range []string{"a query", "a query......"} { // 7 octets, then 13
		if _, err := client.Write([]byte(d)); err != nil {
			t.Fatal(err)
		}
	}
	r.feed()
	st := c.q.Stats()
	if st.Queued != 1 || st.Drops[codel.Malformed] != 1 || r.reads.Load() != 2 {
		t.Fatalf("read %d, queued %d, malformed %d; want 2 read, the 13-octet one queued, the 7-octet one counted malformed",
			r.reads.Load(), st.Queued, st.Drops[codel.Malformed])
	}
}

// TestAReaderReadsOnlyOnceCounted: a reader opened on a socket reads
// nothing until it is among its Codel's readers (add), whose reads the
// metrics sum. One that read at once, while attach opened the next
// socket, put queries into the sum late: a test that counted its own
// found one more than it sent. Here a reader opened beside a server's
// leaves the queries the kernel hands its socket unread; once added it
// reads them (late by then: CoDel drops them, counted) and answers what
// comes next.
func TestAReaderReadsOnlyOnceCounted(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reader runs on Linux")
	}
	r := startServer(t, " codel {\n  sockets 1\n }\n", "", wwwZone, "example.org.")
	if r.undo == nil {
		t.Skip("codel shares CoreDNS's socket here")
	}
	more, err := newReader(r.c, r.server, r.local.(*net.UDPAddr).AddrPort(), r)
	if err != nil {
		t.Fatal(err)
	}
	added := false
	t.Cleanup(func() { // once added, the server's shutdown closes it
		if !added {
			more.conn.Close()
			more.feedCon.Close()
			more.undo()
			more.forget()
		}
	})
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	q, _ := m.Pack()
	// Clients from ports of their own: the kernel hands about half of
	// them to the new socket.
	var clients, waiting []*net.UDPConn
	for range 40 {
		c, err := net.DialUDP("udp", nil, r.local.(*net.UDPAddr))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.Write(q)
		clients = append(clients, c)
	}
	time.Sleep(time.Second) // for the answers from the server's socket, a thousand times their usual time
	for _, c := range clients {
		c.SetReadDeadline(time.Now().Add(5 * time.Millisecond))
		if _, err := c.Read(make([]byte, 512)); err != nil {
			waiting = append(waiting, c)
		}
	}
	if n := more.reads.Load(); n != 0 {
		t.Fatalf("a reader not yet added read %d queries", n)
	}
	if len(waiting) == 0 {
		t.Fatal("no client's query went to the new socket")
	}
	r.c.add(more)
	added = true
	for end := time.Now().Add(2 * time.Second); more.reads.Load() < uint64(len(waiting)) && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond)
	}
	if n := more.reads.Load(); n != uint64(len(waiting)) {
		t.Fatalf("the added reader read %d queries, want the %d left on its socket", n, len(waiting))
	}
	for _, c := range waiting {
		c.Write(q)
		c.SetReadDeadline(time.Now().Add(2 * time.Second))
		if _, err := c.Read(make([]byte, 512)); err != nil {
			t.Fatalf("a client of the added reader's socket is not answered: %v", err)
		}
	}
}
