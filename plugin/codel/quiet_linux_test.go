//go:build linux

package codel

import (
	"context"
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
// 127.0.0.1 has a quiet socket that no epoll watches, while the reader's
// own is watched (the check sees registrations), and its answers leave by
// it: with the readers' own sockets shut for writing, queries from 40
// client ports, spread over the readers, are all answered.
func TestAnswersLeaveByTheQuietSocket(t *testing.T) {
	r := startServer(t, " codel\n", "", quietZone, "example.org")
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
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	c := &dns.Client{Timeout: 2 * time.Second}
	for i := range 40 {
		in, _, err := c.Exchange(m, r.local.String()) // a socket, and a port, of its own each time
		if err != nil || len(in.Answer) != 1 {
			t.Fatalf("query %d, with the readers' sockets shut for writing: %v, %v", i, in, err)
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
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	c := &dns.Client{Timeout: 2 * time.Second}
	for i := range 20 {
		if in, _, err := c.Exchange(m, r.local.String()); err != nil || len(in.Answer) != 1 {
			t.Fatalf("query %d, with the quiet sockets shut for writing: %v, %v", i, in, err)
		}
	}
}

// TestAQuietSocketTakesNoQuery: beside listeners on 127.0.0.1, one of
// them connected away as codel does to CoreDNS's, a quiet socket takes
// none of 60 queries from fresh client ports, and a listener bound after
// it (a reload's) shares them with the one before: the quiet socket is in
// no group of theirs; and it is not connected. Beside every address, or an
// IPv6 one, none is opened.
func TestAQuietSocketTakesNoQuery(t *testing.T) {
	port := freeport.Get(t)
	addr := netip.AddrPortFrom(netip.MustParseAddr("127.0.0.1"), uint16(port))
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
	for range 60 {
		client, err := net.Dial("udp", addr.String())
		if err != nil {
			t.Fatal(err)
		}
		client.Write([]byte("a query......"))
		client.Close()
	}
	time.Sleep(20 * time.Millisecond)
	if n := pending(t, q); n > 0 {
		t.Fatalf("the quiet socket took %d of 60 queries", n)
	}
	got := [2]int{pending(t, first), pending(t, second)}
	if got[0]+got[1] != 60 || got[0] == 0 || got[1] == 0 {
		t.Fatalf("the listeners took %d and %d of 60 queries; want all, shared", got[0], got[1])
	}
	for _, a := range []string{"[::]", "0.0.0.0", "[::1]"} {
		if q, err := quietSocket(netip.MustParseAddrPort(fmt.Sprintf("%s:%d", a, port))); err != errNoQuietPlace {
			q.Close()
			t.Errorf("beside %s: %v, want %v", a, err, errNoQuietPlace)
		}
	}
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

// reusingListener binds a socket to addr with SO_REUSEPORT, as CoreDNS's
// and codel's own are.
func reusingListener(t *testing.T, addr netip.AddrPort) *net.UDPConn {
	t.Helper()
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
		return serr
	}}
	network := "udp4"
	if addr.Addr().Is6() {
		network = "udp"
	}
	pc, err := lc.ListenPacket(context.Background(), network, addr.String())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pc.Close() })
	return pc.(*net.UDPConn)
}

// pending reads every datagram waiting on a socket (a *net.UDPConn, or
// the quiet socket's *os.File) and counts them.
func pending(t *testing.T, c syscall.Conn) int {
	t.Helper()
	fd := connFd(t, c)
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
