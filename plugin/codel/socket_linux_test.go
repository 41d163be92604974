//go:build linux

package codel

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"sync"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/freeport"
)

// reusePort listens on addr with SO_REUSEPORT, as CoreDNS's listener does
// (an IPv6 address, [::] among them, dual-stack as Go opens it for "udp").
func reusePort(addr string) (*net.UDPConn, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) { serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1) })
		if err != nil {
			return err
		}
		return serr
	}}
	network := "udp4"
	if ap, err := netip.ParseAddrPort(addr); err == nil && ap.Addr().Is6() {
		network = "udp"
	}
	pc, err := lc.ListenPacket(context.Background(), network, addr)
	if err != nil {
		return nil, err
	}
	return pc.(*net.UDPConn), nil
}

// TestSharedSocketsWhileDescriptorsChurn: sharedSockets lists descriptors
// in /proc/self/fd and then copies them, and during a reload the old
// server closes its own meanwhile. A descriptor closed between the two is
// passed by (TestCodelAcrossReloads, run again and again beside two CPU
// hogs, saw codel give up on a reload with "bad file descriptor"), and one
// whose number went to another file meanwhile is not taken for the socket
// listed: steal would connect that file away (the same runs found one of
// codel's three sockets, or CoreDNS's, not listening after a reload).
// Here sockets on the same address, and others, open and close while
// sharedSockets runs again and again: it always finds the one that stays,
// and every socket it returns is the one it names and is bound to addr.
func TestSharedSocketsWhileDescriptorsChurn(t *testing.T) {
	// An address of loopback no other test binds: a port chosen by the
	// kernel for a socket with SO_REUSEPORT may be one that another test's
	// server holds with it (the two would share that server's datagrams).
	core, err := reusePort("127.3.2.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	addr := boundTo(core)
	coreInode, err := inodeOf(core)
	if err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 2 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				// An old server's socket on the address going away, and
				// other sockets taking the numbers it frees.
				old, err := reusePort(addr.String())
				other, oerr := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
				if err == nil {
					old.Close()
				}
				if oerr == nil {
					other.Close()
				}
			}
		}()
	}
	defer func() { close(stop); wg.Wait() }()
	for end := time.Now().Add(time.Second); time.Now().Before(end); {
		found, err := sharedSockets(addr)
		if err != nil {
			t.Fatalf("sharedSockets: %v", err)
		}
		var core bool
		for _, s := range found {
			ino, err := inodeOf(s.conn)
			if err != nil || ino != s.inode {
				t.Fatalf("a socket named inode %s is inode %s (%v)", s.inode, ino, err)
			}
			if got := boundTo(s.conn); got != addr {
				t.Fatalf("a socket bound to %s, listed for %s", got, addr)
			}
			core = core || s.inode == coreInode
		}
		closeShared(found)
		if !core {
			t.Fatalf("the socket that stays bound to %s was not found", addr)
		}
	}
}

// boundTo is the address a UDP socket is bound to, IPv4 unmapped.
func boundTo(c *net.UDPConn) netip.AddrPort {
	a := c.LocalAddr().(*net.UDPAddr).AddrPort()
	return netip.AddrPortFrom(a.Addr().Unmap(), a.Port())
}

// TestAStolenSocketStaysAwayBesideANewServers: CoreDNS's socket, stolen,
// is not given back while another socket of the process listens on its
// address (a reload's new server, which caddy could not hand it: given
// back, a socket bound to every address goes to the head of the kernel's
// chain and takes the queries until its stopping server closes it); with
// none it is, and a steal undone part way gives it back regardless.
func TestAStolenSocketStaysAwayBesideANewServers(t *testing.T) {
	for _, bind := range []string{"127.0.0.1", "[::]"} {
		t.Run(bind, func(t *testing.T) {
			addr := netip.MustParseAddrPort(fmt.Sprintf("%s:%d", bind, freeport.Get(t)))
			core := reusingListener(t, addr)
			inode, err := inodeOf(core)
			if err != nil {
				t.Fatal(err)
			}
			connected := func() bool {
				_, err := unix.Getpeername(connFd(t, core))
				return err != unix.ENOTCONN
			}
			for _, c := range []struct {
				another, rollback, back bool
			}{
				{another: true, back: false},
				{another: false, back: true},
				{another: true, rollback: true, back: true},
			} {
				mine, err := dupConn(core, addr) // codel steals a copy of its own, as sharedSockets makes
				if err != nil {
					t.Fatal(err)
				}
				if err := steal(mine, inode, addr); err != nil || !connected() {
					t.Fatalf("steal: %v, connected %v", err, connected())
				}
				var other *net.UDPConn
				if c.another {
					other = reusingListener(t, addr)
				}
				unsteal(mine, inode, c.rollback)
				mine.Close()
				if back := !connected(); back != c.back {
					t.Errorf("another listening %v, rollback %v: given back %v, want %v", c.another, c.rollback, back, c.back)
				}
				if other != nil {
					other.Close()
				}
			}
		})
	}
}

// TestAStolenSocketNoServerHoldsIsLetGo: a server's socket that caddy
// could not hand to a reload's server is stolen by the reload's codel
// too, and closed by its server as that stops. From then on only codel
// holds it: the next codel does not steal it again, and the codel that
// holds it, as it stops, neither gives it back (no server would read what
// came to it) nor keeps it open. Stolen again by each codel from the one
// before, every reload with codel in both Corefiles left one more socket
// open for the process's life.
func TestAStolenSocketNoServerHoldsIsLetGo(t *testing.T) {
	for _, bind := range []string{"127.0.0.1", "[::]"} {
		t.Run(bind, func(t *testing.T) {
			addr := netip.MustParseAddrPort(fmt.Sprintf("%s:%d", bind, freeport.Get(t)))
			old, err := reusePort(addr.String()) // the stopping server's
			if err != nil {
				t.Fatal(err)
			}
			inode, err := inodeOf(old)
			if err != nil {
				t.Fatal(err)
			}
			first, err := sharedSockets(addr) // the codel that held it
			if err != nil || len(first) != 1 || first[0].inode != inode {
				t.Fatalf("the first codel's sockets: %v, %v", first, err)
			}
			if err := stealAll(first, addr); err != nil {
				t.Fatal(err)
			}
			peer := func() error { _, err := unix.Getpeername(connFd(t, first[0].conn)); return err }
			held := sharedHeld(t, addr, inode)
			if !held {
				t.Fatal("a stolen socket its server still holds is not found for the next codel")
			}
			old.Close() // its server stops
			if sharedHeld(t, addr, inode) {
				t.Error("the next codel finds the stolen socket no server holds, to steal it again")
			}
			unsteal(first[0].conn, inode, false)
			if err := peer(); err == unix.ENOTCONN {
				t.Error("the socket no server holds was given back: the kernel would hand it queries nobody reads")
			}
			closeShared(first)
			for try := 0; ; try++ {
				if n, err := descriptorsOf(inode); err != nil || n == 0 {
					break
				}
				if try == 100 {
					t.Fatal("the socket is still open after the last codel that held it let it go")
				}
				time.Sleep(10 * time.Millisecond) // the waker closes its copy on its own goroutine
			}
		})
	}
}

// sharedHeld says whether sharedSockets finds the socket of inode on addr,
// closing what it found.
func sharedHeld(t *testing.T, addr netip.AddrPort, inode string) bool {
	t.Helper()
	found, _ := sharedSockets(addr)
	defer closeShared(found)
	for _, c := range found {
		if c.inode == inode {
			return true
		}
	}
	return false
}

// TestAReadCaughtBlockingOnAStolenSocketEnds: a read of CoreDNS's server
// that the kernel blocked (the socket in blocking mode for a moment: caddy
// hands a socket to a reload's server through net.Conn.File and
// net.FilePacketConn, and Fd puts it in blocking mode until the copy is
// made) waited for a datagram; with the socket stolen, connected away,
// none came, and its server's shutdown, whose read deadline cannot reach
// a blocked system call, waited for it forever: a reload that never
// ended, a process that SIGTERM did not stop. While a socket is stolen,
// codel sends it a datagram of no octets now and then, which such a read
// takes, and CoreDNS's server passes by (shorter than a header). Here a
// read is made to block so, the socket stolen, and the read must end and
// the reader go back to the poller, where a deadline reaches it.
func TestAReadCaughtBlockingOnAStolenSocketEnds(t *testing.T) {
	addr := netip.MustParseAddrPort(fmt.Sprintf("127.0.0.1:%d", freeport.Get(t)))
	core := reusingListener(t, addr)
	inode, err := inodeOf(core)
	if err != nil {
		t.Fatal(err)
	}
	fd := connFd(t, core)
	reads := make(chan error, 16)
	go func() {
		buf := make([]byte, 512)
		for {
			_, _, err := core.ReadFrom(buf)
			reads <- err
			if err != nil && !errors.Is(err, os.ErrDeadlineExceeded) {
				return
			}
		}
	}()
	// The reader waits in the poller; the socket goes blocking, a datagram
	// wakes the reader, and its next read blocks in the kernel.
	time.Sleep(50 * time.Millisecond)
	if err := unix.SetNonblock(fd, false); err != nil {
		t.Fatal(err)
	}
	client, err := net.DialUDP("udp4", nil, net.UDPAddrFromAddrPort(addr))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	client.Write([]byte("a query"))
	if err := <-reads; err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond) // into the blocking read
	if err := unix.SetNonblock(fd, true); err != nil {
		t.Fatal(err)
	}
	if err := steal(core, inode, addr); err != nil {
		t.Fatal(err)
	}
	// The shutdown's way to end a read: a deadline. It reaches the reader
	// only once its blocked read has ended.
	core.SetReadDeadline(time.Now().Add(-time.Second))
	deadline := time.After(5 * time.Second)
	for {
		select {
		case err := <-reads:
			if errors.Is(err, os.ErrDeadlineExceeded) {
				unsteal(core, inode, true)
				return
			}
		case <-deadline:
			// Given back, the socket takes the client's datagram, and the
			// read ends: else closing it would wait for the read forever.
			unsteal(core, inode, true)
			client.Write([]byte("the read's end"))
			t.Fatal("the read blocked on the stolen socket did not end in 5 s")
		}
	}
}

// TestAWakeUpIsNeitherReadNorMalformed: a retiring reader's own socket is
// connected to its own address, as a stolen one is, and the kernel may
// hand it a stolen socket's wake-up (wakeStolen: an empty datagram from
// that address and port). It is let go, neither counted a read nor a
// malformed query; an empty datagram from a client is both.
func TestAWakeUpIsNeitherReadNorMalformed(t *testing.T) {
	for _, host := range []string{"127.0.0.1", "::1"} {
		t.Run(host, func(t *testing.T) {
			conn, err := reusePort(net.JoinHostPort(host, "0"))
			if err != nil {
				t.Skip(err)
			}
			defer conn.Close()
			raw, err := conn.SyscallConn()
			if err != nil {
				t.Fatal(err)
			}
			c := heldCodel(t)
			r := &reader{c: c, conn: conn, feedRaw: raw, local: conn.LocalAddr()}
			addr := conn.LocalAddr().(*net.UDPAddr).AddrPort()

			client, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(addr))
			if err != nil {
				t.Fatal(err)
			}
			defer client.Close()
			waitFor(t, raw, func() { client.Write(nil) })
			r.feed()
			if st := c.q.Stats(); st.Drops[codel.Malformed] != 1 || r.reads.Load() != 1 {
				t.Fatalf("a client's empty datagram: %d read, %d malformed; want 1 and 1", r.reads.Load(), st.Drops[codel.Malformed])
			}

			// Retiring: connected to its own address, beside a stolen
			// socket's waker on the same address and port.
			if err := connectToSelf(conn, addr); err != nil {
				t.Fatal(err)
			}
			waker, err := reusePort(addr.String())
			if err != nil {
				t.Fatal(err)
			}
			defer waker.Close()
			waitFor(t, raw, func() { waker.WriteToUDPAddrPort(nil, addr) })
			r.feed()
			if st := c.q.Stats(); st.Drops[codel.Malformed] != 1 || r.reads.Load() != 1 {
				t.Fatalf("a wake-up: %d read, %d malformed; want both still 1", r.reads.Load(), st.Drops[codel.Malformed])
			}
			if waiting(t, raw) {
				t.Fatal("the wake-up was left in the socket")
			}
		})
	}
}

// waitFor sends by send, and waits until a datagram waits on raw's socket.
func waitFor(t *testing.T, raw syscall.RawConn, send func()) {
	t.Helper()
	send()
	for deadline := time.Now().Add(5 * time.Second); !waiting(t, raw); {
		if time.Now().After(deadline) {
			t.Fatal("nothing arrived")
		}
		time.Sleep(time.Millisecond)
	}
}

// waiting reports whether a datagram, empty or not, waits on raw's socket.
func waiting(t *testing.T, raw syscall.RawConn) bool {
	t.Helper()
	var rerr error
	if err := raw.Control(func(fd uintptr) {
		_, _, rerr = unix.Recvfrom(int(fd), make([]byte, 1), unix.MSG_PEEK|unix.MSG_DONTWAIT)
	}); err != nil {
		t.Fatal(err)
	}
	return rerr == nil // an empty datagram peeks as 0 octets, no error
}
