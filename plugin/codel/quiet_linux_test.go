//go:build linux

package codel

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/miekg/dns"
	"golang.org/x/sys/unix"

	"github.com/ontimedns/ontime/internal/freeport"
)

const quietZone = "$ORIGIN example.org.\n@ 3600 IN SOA ns hostmaster 1 3600 600 86400 60\n@ 3600 IN NS ns\nns 3600 IN A 192.0.2.53\nwww 3600 IN A 192.0.2.1\n"

// TestAnswersLeaveByTheQuietSocket: every reader of a server bound to
// 127.0.0.1, to 0.0.0.0 or to nothing (every address of both families)
// has a quiet socket that no epoll watches, while the reader's own is
// watched (the check sees registrations), and its answers leave by it:
// with the readers' own sockets shut for writing, queries from 40 client
// ports, spread over the readers, are all answered; on a server bound to
// every address, from the address each was sent to (127.0.0.1 and
// 127.0.0.2: the client's socket is connected, and takes an answer from
// nowhere else).
func TestAnswersLeaveByTheQuietSocket(t *testing.T) {
	for _, bind := range []string{"127.0.0.1", "0.0.0.0", ""} {
		t.Run("bind="+bind, func(t *testing.T) {
			r := startServerOn(t, bind, " codel\n", "", quietZone, "example.org")
			watched := epollWatched(t)
			group := readersOf(r)
			for _, o := range group {
				if o.quiet == nil {
					t.Fatalf("a reader of %s has no quiet socket", o.local)
				}
				if !watched[fdOf(t, o.raw)] {
					t.Fatalf("the reader's own socket is not among the descriptors epoll watches (%v): the check sees nothing", watched)
				}
				if q := fdOf(t, o.quietRaw); watched[q] {
					t.Fatalf("the quiet socket (descriptor %d) is watched by an epoll", q)
				}
				var serr error
				if err := o.raw.Control(func(fd uintptr) { serr = unix.Shutdown(int(fd), unix.SHUT_WR) }); err != nil || (serr != nil && serr != unix.ENOTCONN) {
					t.Fatal(err, serr) // ENOTCONN: an unconnected UDP socket is shut all the same
				}
			}
			tos := []string{"127.0.0.1"}
			if bind != "127.0.0.1" {
				tos = append(tos, "127.0.0.2")
			}
			port := r.local.(*net.UDPAddr).Port
			m := new(dns.Msg)
			m.SetQuestion("www.example.org.", dns.TypeA)
			c := &dns.Client{Timeout: 2 * time.Second}
			for i := range 40 {
				to := net.JoinHostPort(tos[i%len(tos)], fmt.Sprint(port))
				in, _, err := c.Exchange(m, to) // a socket, and a port, of its own each time
				if err != nil || len(in.Answer) != 1 {
					t.Fatalf("query %d to %s, with the readers' sockets shut for writing: %v, %v", i, to, in, err)
				}
			}
			read := 0
			for _, o := range group {
				if o.reads.Load() > 0 {
					read++
				}
			}
			if len(group) > 1 && read < 2 {
				t.Errorf("%d of %d readers read the 40 clients' queries: the quiet sockets took their group from them", read, len(group))
			}
		})
	}
}

// TestAnIPv6ClientIsAnsweredBesideTheQuietSocket: on a server bound to
// every address of both families, whose quiet sockets send to IPv4
// clients only, queries over ::1 and 127.0.0.1 in turn are all answered,
// the IPv6 ones out of the readers' own sockets.
func TestAnIPv6ClientIsAnsweredBesideTheQuietSocket(t *testing.T) {
	if c, err := net.ListenPacket("udp6", "[::1]:0"); err != nil {
		t.Skip("no IPv6 loopback:", err)
	} else {
		c.Close()
	}
	r := startServerOn(t, "", " codel\n", "", quietZone, "example.org")
	if r.quiet == nil {
		t.Fatal("no quiet socket beside [::]")
	}
	port := r.local.(*net.UDPAddr).Port
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	c := &dns.Client{Timeout: 2 * time.Second}
	for i := range 20 {
		to := net.JoinHostPort([]string{"::1", "127.0.0.1"}[i%2], fmt.Sprint(port))
		if in, _, err := c.Exchange(m, to); err != nil || len(in.Answer) != 1 {
			t.Fatalf("query %d to %s: %v, %v", i, to, in, err)
		}
	}
}

// TestWhatTheQuietSocketRefusesGoesOutOfTheReaders: with the quiet
// sockets shut for writing, every answer is refused there and goes out of
// the reader's own socket, as before it had one: 20 queries, all
// answered.
func TestWhatTheQuietSocketRefusesGoesOutOfTheReaders(t *testing.T) {
	r := startServer(t, " codel\n", "", quietZone, "example.org")
	for _, o := range readersOf(r) {
		if o.quiet == nil {
			t.Fatalf("a reader of %s has no quiet socket", o.local)
		}
		var serr error
		if err := o.quietRaw.Control(func(fd uintptr) { serr = unix.Shutdown(int(fd), unix.SHUT_WR) }); err != nil || (serr != nil && serr != unix.ENOTCONN) {
			t.Fatal(err, serr)
		}
	}
	answersTwenty(t, r, "with the quiet sockets shut for writing")
}

// answersTwenty fails unless 20 queries for www.example.org/A to the
// server of reader r are each answered with one record, within 2 s.
func answersTwenty(t *testing.T, r *reader, while string) {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	c := &dns.Client{Timeout: 2 * time.Second}
	for i := range 20 {
		if in, _, err := c.Exchange(m, r.local.String()); err != nil || len(in.Answer) != 1 {
			t.Fatalf("query %d, %s: %v, %v", i, while, in, err)
		}
	}
}

// TestAQuietSocketTakesNoQuery: beside listeners on 127.0.0.1, on
// 0.0.0.0 and on [::] (both families), one of them connected away as
// codel does to CoreDNS's, a quiet socket takes none of 60 queries from
// fresh client ports (over 127.0.0.1, and ::1 beside [::]), and a
// listener bound after it (a reload's) shares them with the one before:
// the quiet socket is in no group of theirs; and it is not connected.
// Beside [::] it scores as the listeners do, and the kernel hands a query
// to the first of the address's chain: opened before them, it takes
// queries, and the check sees it. Beside one IPv6 address none is opened.
func TestAQuietSocketTakesNoQuery(t *testing.T) {
	for _, c := range []struct {
		bind string
		tos  []string
	}{
		{"127.0.0.1", []string{"127.0.0.1"}},
		{"0.0.0.0", []string{"127.0.0.1"}},
		{"[::]", []string{"127.0.0.1", "::1"}},
	} {
		t.Run(c.bind, func(t *testing.T) {
			port := freeport.Get(t)
			addr := netip.MustParseAddrPort(fmt.Sprintf("%s:%d", c.bind, port))
			connected := reusingListener(t, addr)
			if err := connectToSelf(connected, addr); err != nil {
				t.Fatal(err)
			}
			first := reusingListener(t, addr)
			q, err := quietSocket(addr)
			if err != nil {
				t.Fatal(err)
			}
			defer q.Close()
			if _, err := unix.Getpeername(connFd(t, q)); err != unix.ENOTCONN {
				t.Fatalf("the quiet socket has a peer (%v): the kernel would number its datagrams in one sequence", err)
			}
			second := reusingListener(t, addr)
			sent := askFromFreshPorts(t, c.tos, port, 60)
			if n := pending(t, q); n > 0 {
				t.Fatalf("the quiet socket took %d of %d queries", n, sent)
			}
			got := [2]int{pending(t, first), pending(t, second)}
			if got[0]+got[1] != sent || got[0] == 0 || got[1] == 0 {
				t.Fatalf("the listeners took %d and %d of %d queries; want all, shared", got[0], got[1], sent)
			}
			if c.bind != "[::]" {
				return
			}
			early, err := quietSocket(netip.AddrPortFrom(netip.IPv6Unspecified(), uint16(freeport.Get(t))))
			if err != nil {
				t.Fatal(err)
			}
			defer early.Close()
			late := reusingListener(t, netip.MustParseAddrPort(fmt.Sprintf("[::]:%d", portOf(t, early))))
			sent = askFromFreshPorts(t, c.tos[:1], portOf(t, early), 20)
			if n := pending(t, early); n == 0 {
				t.Errorf("a quiet socket opened before its listener took none of %d queries: the check cannot see the order", sent)
			}
			pending(t, late)
		})
	}
	if q, err := quietSocket(netip.MustParseAddrPort(fmt.Sprintf("[::1]:%d", freeport.Get(t)))); err != errNoQuietPlace {
		q.Close()
		t.Errorf("beside [::1]: %v, want %v", err, errNoQuietPlace)
	}
}

// TestAQuietSocketUnderASendTakesNoQueryOnceStopped: a codel that stops
// beside a reload's new socket (bound after its quiet sockets, so after
// them on the kernel's chain, as a new server's is when caddy could not
// hand it the old one) leaves every query to that socket, even with a
// send under way on each quiet socket. The quiet socket is blocking, and
// closing its *os.File does not wait for a send that holds it: the
// kernel's socket stayed on the chain after its reader's was connected
// away, first beside [::], where it scores as the listeners do, and took
// the queries until the send returned, to be closed with them unread.
func TestAQuietSocketUnderASendTakesNoQueryOnceStopped(t *testing.T) {
	for _, bind := range []string{"", "127.0.0.1"} {
		t.Run("bind="+bind, func(t *testing.T) {
			r := startServerOn(t, bind, " codel\n", "", quietZone, "example.org")
			port := r.local.(*net.UDPAddr).Port
			late := reusingListener(t, netip.AddrPortFrom(netip.MustParseAddrPort(r.local.String()).Addr(), uint16(port)))
			group := readersOf(r)
			release := make(chan struct{})
			took := make(chan int, len(group))
			for _, o := range group {
				held := make(chan struct{})
				go o.quietRaw.Control(func(fd uintptr) { // as a worker's sendmmsg does
					close(held)
					<-release
					took <- pendingOn(int(fd))
				})
				<-held
			}
			r.c.stop()
			sent := askFromFreshPorts(t, []string{"127.0.0.1"}, port, 40)
			close(release)
			quiet := 0
			for range group {
				quiet += <-took
			}
			if got := pending(t, late); quiet > 0 || got != sent {
				t.Errorf("of %d queries after codel stopped, the quiet sockets under a send took %d, the new socket %d", sent, quiet, got)
			}
		})
	}
}

// askFromFreshPorts sends n datagrams to port, at the addresses tos in
// turn, each from a socket of its own, and returns how many it sent once
// they have had time to arrive.
func askFromFreshPorts(t *testing.T, tos []string, port, n int) int {
	t.Helper()
	for i := range n {
		client, err := net.Dial("udp", net.JoinHostPort(tos[i%len(tos)], fmt.Sprint(port)))
		if err != nil {
			t.Fatal(err)
		}
		client.Write([]byte("a query......"))
		client.Close()
	}
	time.Sleep(20 * time.Millisecond)
	return n
}

// portOf is the port a socket is bound to.
func portOf(t *testing.T, c syscall.Conn) int {
	t.Helper()
	sa, err := unix.Getsockname(connFd(t, c))
	if err != nil {
		t.Fatal(err)
	}
	switch sa := sa.(type) {
	case *unix.SockaddrInet4:
		return sa.Port
	case *unix.SockaddrInet6:
		return sa.Port
	}
	t.Fatalf("a socket bound to %v", sa)
	return 0
}

// readersOf returns the readers of first's address.
func readersOf(first *reader) []*reader {
	var group []*reader
	for _, o := range *first.c.readers.Load() {
		if o.first == first {
			group = append(group, o)
		}
	}
	return group
}

// reusingListener is reusePort on addr for a test, closed when it ends.
func reusingListener(t *testing.T, addr netip.AddrPort) *net.UDPConn {
	t.Helper()
	conn, err := reusePort(addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn
}

// pending reads every datagram waiting on a socket (a *net.UDPConn, or
// the quiet socket's *os.File) and counts them.
func pending(t *testing.T, c syscall.Conn) int {
	t.Helper()
	return pendingOn(connFd(t, c))
}

// pendingOn is pending on a descriptor.
func pendingOn(fd int) int {
	buf := make([]byte, 64)
	n := 0
	for {
		if _, _, err := unix.Recvfrom(fd, buf, unix.MSG_DONTWAIT); err != nil {
			return n
		}
		n++
	}
}

// connFd is the descriptor of a socket.
func connFd(t *testing.T, c syscall.Conn) int {
	t.Helper()
	raw, err := c.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	return fdOf(t, raw)
}

func fdOf(t *testing.T, raw syscall.RawConn) int {
	t.Helper()
	fd := -1
	if err := raw.Control(func(f uintptr) { fd = int(f) }); err != nil {
		t.Fatal(err)
	}
	return fd
}

// epollWatched returns the descriptors any epoll of this process watches
// (the "tfd:" lines of each eventpoll's fdinfo).
func epollWatched(t *testing.T) map[int]bool {
	t.Helper()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip(err)
	}
	watched := map[int]bool{}
	for _, e := range fds {
		if link, _ := os.Readlink("/proc/self/fd/" + e.Name()); link != "anon_inode:[eventpoll]" {
			continue
		}
		b, err := os.ReadFile("/proc/self/fdinfo/" + e.Name())
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n") {
			var fd int
			if _, err := fmt.Sscanf(line, "tfd: %d", &fd); err == nil {
				watched[fd] = true
			}
		}
	}
	return watched
}

// TestASendTakesNoLockAnotherHolds: answers go out while another
// goroutine holds the socket's write lock (Go's, which RawConn.Write
// takes: another worker's sendmmsg, or a wait for room): an outbox's,
// out of the reader's own socket; a server's, out of its quiet sockets.
// Sends taken through that lock parked a worker for each other's
// sendmmsg, and here for good.
func TestASendTakesNoLockAnotherHolds(t *testing.T) {
	t.Run("reader", func(t *testing.T) {
		r, client := socketPair(t, "udp4", "127.0.0.1:0")
		holdWriteLock(t, r.raw)
		o := new(outbox)
		o.mu.Lock()
		o.add(r, []byte("an answer"), client.LocalAddr().(*net.UDPAddr).AddrPort(), netip.Addr{})
		o.mu.Unlock()
		sent := make(chan struct{})
		go func() {
			o.Flush()
			close(sent)
		}()
		select {
		case <-sent:
		case <-time.After(5 * time.Second):
			t.Fatal("the send waited for the write lock another goroutine holds")
		}
		readAnswer(t, client, "an answer")
	})
	t.Run("quiet", func(t *testing.T) {
		r := startServerOn(t, "127.0.0.1", " codel\n", "", quietZone, "example.org")
		for _, o := range readersOf(r) {
			if o.quiet == nil {
				t.Fatalf("a reader of %s has no quiet socket", o.local)
			}
			holdWriteLock(t, o.quietRaw)
		}
		answersTwenty(t, r, "with the quiet sockets' write locks held")
	})
}

// holdWriteLock holds raw's write lock, as a RawConn.Write in progress
// does, until the test ends.
func holdWriteLock(t *testing.T, raw syscall.RawConn) {
	locked, release := make(chan struct{}), make(chan struct{})
	go raw.Write(func(uintptr) bool {
		close(locked)
		<-release
		return true
	})
	<-locked
	t.Cleanup(func() { close(release) })
}
