//go:build linux

package codel

import (
	"bufio"
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// openSockets returns the two descriptors the reader reads (conn, on which
// it also blocks, and feed, which workers read without waiting) and what
// undoes the opening.
//
// CoreDNS's server reads its socket in its own loop, a goroutine per
// packet, and exposes neither the socket nor a hook on that loop. Both
// read the same queue when codel merely shares the socket, and the share
// CoreDNS's loop took (one query in seven under load) went the slow way:
// a goroutine, codel's queue, a system call per answer. So, where CoreDNS's
// socket has SO_REUSEPORT (its listener sets it on Linux), codel opens its
// own socket on the same address, and connects CoreDNS's to the socket's
// own address: a connected UDP socket only matches datagrams from its peer,
// and none come from there, so the kernel hands every query to codel's
// socket. Its own replies go out from the same address and port. When the
// last reader of that socket closes, CoreDNS's socket is disconnected
// again, back to listening for everyone. Where this cannot be done, the
// reader shares CoreDNS's socket as before, if share; else it is an error
// (a second socket of codel's own is no use where the first failed).
func openSockets(addr netip.AddrPort, share bool) (conn, feed *net.UDPConn, undo, forget func(), err error) {
	cores, err := sharedSockets(addr)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	own, ownInode, why := ownSocket(addr)
	if why == nil {
		forget := func() { ownSockets.Delete(ownInode) }
		if feed, why = dupConn(own, addr); why == nil {
			if why = stealAll(cores, addr); why == nil {
				// Undone: CoreDNS's sockets back, and codel's own
				// connected away, so that what it holds is all it gets.
				return own, feed, func() {
					for _, c := range cores {
						unsteal(c.conn, c.inode, false)
					}
					closeShared(cores)
					connectToSelf(own, addr)
				}, forget, nil
			}
			feed.Close()
		}
		own.Close()
		forget()
	}
	if !share {
		closeShared(cores)
		return nil, nil, nil, nil, fmt.Errorf("%s: no socket of codel's own: %w", addr, why)
	}
	if own != nil { // opened, but not made the server's
		log.Infof("%s: %v; codel shares CoreDNS's socket", addr, why)
	}
	closeShared(cores[1:])
	core := cores[0].conn
	if feed, err = dupConn(core, addr); err != nil {
		core.Close()
		return nil, nil, nil, nil, err
	}
	return core, feed, nil, nil, nil
}

// stealAll steals every CoreDNS socket on addr, or none. There are two for
// a while after a Corefile reload that could not hand its socket over
// (the PROXY-protocol wrapper that codel's TCP limit puts on the server's
// sockets has no file for caddy to pass on): the old server's, and the new
// one's, which the kernel would hand half the queries.
func stealAll(cores []sharedSocket, addr netip.AddrPort) error {
	for i, c := range cores {
		if err := steal(c.conn, c.inode, addr); err != nil {
			for _, d := range cores[:i] {
				unsteal(d.conn, d.inode, true) // this steal's undoing: back whatever else listens
			}
			return err
		}
	}
	return nil
}

// receiveBuffer is what codel asks of its own socket's receive buffer. The
// kernel's default (net.core.rmem_default, 208 KiB here) holds a few
// hundred queries, 3 ms at 80,000 a second: a moment the server does not
// run (a page fault the hypervisor serves slowly, the machine taking the
// core away) overflowed it, and the kernel dropped queries where nobody
// counts them. A query kept waits in the buffer stamped with its arrival,
// and CoDel drops it, counted, if it is late by the time it is read.
const receiveBuffer = 4 << 20

// ownSockets are the inodes of the sockets codel opened itself: sharedSockets
// passes them by, looking for CoreDNS's.
var ownSockets sync.Map

// ownSocket opens a socket of codel's own on addr beside CoreDNS's, with the
// options miekg/dns sets on its own (the destination of each datagram, on a
// socket bound to every address).
func ownSocket(addr netip.AddrPort) (*net.UDPConn, string, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			if serr == nil && addr.Addr().IsUnspecified() {
				if addr.Addr().Is6() {
					serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO, 1)
					unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_PKTINFO, 1) // IPv4 on a dual-stack socket, where allowed
				} else {
					serr = unix.SetsockoptInt(int(fd), unix.IPPROTO_IP, unix.IP_PKTINFO, 1)
				}
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	network := "udp4"
	if addr.Addr().Is6() {
		network = "udp" // [::]:PORT: dual-stack, as CoreDNS's own
	}
	pc, err := lc.ListenPacket(context.Background(), network, addr.String())
	if err != nil {
		return nil, "", err
	}
	conn := pc.(*net.UDPConn)
	conn.SetReadBuffer(receiveBuffer) // best effort: the kernel caps it at net.core.rmem_max
	ino, err := inodeOf(conn)
	if err != nil {
		conn.Close() // unknown, sharedSocket might take it for CoreDNS's
		return nil, "", err
	}
	ownSockets.Store(ino, true)
	return conn, ino, nil
}

// dupConn returns a second *net.UDPConn on conn's socket.
func dupConn(conn *net.UDPConn, addr netip.AddrPort) (*net.UDPConn, error) {
	f, err := conn.File()
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pc, err := net.FilePacketConn(f)
	if err != nil {
		return nil, err
	}
	if c, ok := pc.(*net.UDPConn); ok {
		return c, nil
	}
	pc.Close()
	return nil, fmt.Errorf("%s: not a UDP socket", addr)
}

func inodeOf(conn *net.UDPConn) (string, error) {
	raw, err := conn.SyscallConn()
	if err != nil {
		return "", err
	}
	var ino string
	var serr error
	if err := raw.Control(func(fd uintptr) { ino, serr = fdInode(int(fd)) }); err != nil {
		return "", err
	}
	return ino, serr
}

// fdInode returns the inode of the file descriptor fd refers to.
func fdInode(fd int) (string, error) {
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return "", err
	}
	return fmt.Sprint(st.Ino), nil
}

// stolen counts the readers of each CoreDNS socket (by inode) that codel
// has connected away: a server reloaded with codel in both Corefiles has
// two for a while, and only the last to close may give the socket back.
// at is the address each was bound to: a socket bound to every address is
// bound to loopback once connected, and /proc then lists it there, but
// the next reader of the address (another socket of codel's own beside
// it, a reload's) must find it. Closing wake stops each one's waker
// (wakeStolen).
var stolen = struct {
	sync.Mutex
	n    map[string]int
	at   map[string]netip.AddrPort
	wake map[string]chan struct{}
}{n: map[string]int{}, at: map[string]netip.AddrPort{}, wake: map[string]chan struct{}{}}

// steal connects CoreDNS's socket core to its own address, once it has
// SO_REUSEPORT: clients' datagrams go to codel's socket from then on.
func steal(core *net.UDPConn, inode string, addr netip.AddrPort) error {
	stolen.Lock()
	defer stolen.Unlock()
	if stolen.n[inode] > 0 {
		stolen.n[inode]++
		return nil
	}
	raw, err := core.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	err = raw.Control(func(fd uintptr) {
		if v, e := unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT); e != nil || v == 0 {
			serr = fmt.Errorf("CoreDNS's socket has no SO_REUSEPORT")
		}
	})
	if err == nil {
		err = serr
	}
	if err == nil {
		err = connectToSelf(core, addr)
	}
	if err == nil {
		stolen.n[inode], stolen.at[inode] = 1, addr
		if stop, werr := wakeStolen(raw); werr == nil {
			stolen.wake[inode] = stop
		}
	}
	return err
}

// wakeEvery is how often a stolen socket is sent a datagram of no octets,
// well inside the 5 s a CoreDNS server's shutdown waits for its readers.
const wakeEvery = time.Second

// wakeStolen sends the stolen socket of raw, connected to itself, a
// datagram of no octets at once and every wakeEvery, from a copy of its
// descriptor, until the returned channel is closed. CoreDNS's servers
// read the socket through Go's poller, but a read can still block in the
// kernel: caddy hands a socket to a reload's server through
// net.Conn.File and net.FilePacketConn, and Fd puts the socket (all its
// descriptors) in blocking mode until the copy is made; a read begun in
// that moment waits for a datagram, out of reach of the read deadline a
// shutdown sets. Stolen, the socket takes none from clients, and the
// server's shutdown waited for that read forever: a reload that never
// ended, a process that SIGTERM did not stop
// (TestAReadCaughtBlockingOnAStolenSocketEnds). The empty datagram ends
// such a read, and CoreDNS's server passes it by (shorter than a header).
func wakeStolen(raw syscall.RawConn) (chan struct{}, error) {
	fd := -1
	var derr error
	if err := raw.Control(func(f uintptr) { fd, derr = unix.Dup(int(f)) }); err != nil {
		return nil, err
	}
	if derr != nil {
		return nil, derr
	}
	unix.CloseOnExec(fd)
	stop := make(chan struct{})
	go func() {
		defer unix.Close(fd)
		tick := time.NewTicker(wakeEvery)
		defer tick.Stop()
		for {
			unix.Sendto(fd, nil, unix.MSG_DONTWAIT, nil) // to the peer it is connected to: itself
			select {
			case <-stop:
				return
			case <-tick.C:
			}
		}
	}()
	return stop, nil
}

// connectToSelf connects conn, bound to addr, to its own address (a
// loopback one, where addr is every address): it then matches no client's
// datagram.
func connectToSelf(conn syscall.Conn, addr netip.AddrPort) error {
	raw, err := conn.SyscallConn()
	if err != nil {
		return err
	}
	self := addr.Addr()
	if self.IsUnspecified() {
		self = netip.IPv6Loopback()
		if addr.Addr().Is4() {
			self = netip.AddrFrom4([4]byte{127, 0, 0, 1})
		}
	}
	var serr error
	if err := raw.Control(func(fd uintptr) {
		serr = unix.Connect(int(fd), sockaddrOf(netip.AddrPortFrom(self, addr.Port())))
	}); err != nil {
		return err
	}
	return serr
}

// unsteal gives CoreDNS's socket back to every client when its last
// reader closes (connect to AF_UNSPEC dissolves the association, and a
// socket bound to every address is bound to every address again); but not
// where another socket of CoreDNS's listens on the address by now: a
// reload's new server, to which caddy could not hand this one (codel's TCP
// wrapper has no file to pass on). This one's server is then stopping, and
// given back it would take queries only to close with them in it: bound
// to every address, a socket disconnected goes to the head of the
// address's hash chain (udp_lib_rehash), and took every query there until
// it closed (TestCodelAcrossReloads lost 4 of 6,447 under load). Nor where
// no server holds it any more (heldByServer): nobody would read it.
// rollback: a steal that failed part way is undone, and the socket goes
// back as it was.
func unsteal(core *net.UDPConn, inode string, rollback bool) {
	stolen.Lock()
	defer stolen.Unlock()
	if stolen.n[inode] > 1 {
		stolen.n[inode]--
		return
	}
	served := heldByServer(inode)
	addr := stolen.at[inode]
	delete(stolen.n, inode)
	delete(stolen.at, inode)
	if stop := stolen.wake[inode]; stop != nil {
		close(stop)
		delete(stolen.wake, inode)
	}
	if !rollback && (!served || anotherListens(addr, inode)) {
		return
	}
	if raw, err := core.SyscallConn(); err == nil {
		raw.Control(func(fd uintptr) {
			sa := &unix.RawSockaddr{Family: unix.AF_UNSPEC}
			unix.Syscall(unix.SYS_CONNECT, fd, uintptr(unsafe.Pointer(sa)), unsafe.Sizeof(*sa))
		})
	}
}

func sockaddrOf(ap netip.AddrPort) unix.Sockaddr {
	if ap.Addr().Is4() {
		return &unix.SockaddrInet4{Port: int(ap.Port()), Addr: ap.Addr().As4()}
	}
	return &unix.SockaddrInet6{Port: int(ap.Port()), Addr: ap.Addr().As16()}
}

// sharedSocket is a descriptor of a UDP socket of CoreDNS's, and its inode.
type sharedSocket struct {
	conn  *net.UDPConn
	inode string
}

func closeShared(cs []sharedSocket) {
	for _, c := range cs {
		c.conn.Close()
	}
}

// sharedSockets returns new *net.UDPConns on the UDP sockets this process
// has bound to addr (the ones CoreDNS's servers read), found through
// /proc: the sockets' inodes in /proc/self/net/udp{,6}, then the
// descriptors that link to them in /proc/self/fd. codel's own sockets on
// the same address are passed by.
func sharedSockets(addr netip.AddrPort) ([]sharedSocket, error) {
	inodes, err := boundInodes(procTable(addr), addr, false)
	if err != nil {
		return nil, err
	}
	stolen.Lock()
	for inode, at := range stolen.at {
		if at != addr {
			continue
		}
		if heldByServer(inode) {
			inodes[inode] = true
		} else {
			delete(inodes, inode) // only codel holds it (bound to one address, /proc lists it there)
		}
	}
	stolen.Unlock()
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	var found []sharedSocket
	fail := func(err error) ([]sharedSocket, error) {
		closeShared(found)
		return nil, err
	}
	seen := map[string]bool{}
	for _, fd := range fds {
		inode, ok := socketOf(fd.Name())
		if !ok {
			continue
		}
		if _, own := ownSockets.Load(inode); own || !inodes[inode] || seen[inode] {
			continue
		}
		var n int
		fmt.Sscan(fd.Name(), &n)
		// Dup first: an *os.File closes its descriptor when collected,
		// and this one is CoreDNS's.
		dup, err := syscall.Dup(n)
		if errors.Is(err, syscall.EBADF) {
			// Closed since it was listed: during a reload the old
			// server closes its descriptors while the new one starts.
			continue
		}
		if err != nil {
			return fail(fmt.Errorf("descriptor %d of CoreDNS's socket: %w", n, err))
		}
		// The number may also have been closed and given to another
		// file since: the copy must still be the socket listed, or
		// steal would connect some other socket away.
		if now, err := fdInode(dup); err != nil || now != inode {
			syscall.Close(dup)
			continue
		}
		seen[inode] = true
		syscall.CloseOnExec(dup)
		f := os.NewFile(uintptr(dup), "codel "+addr.String())
		pc, err := net.FilePacketConn(f) // dups again, and registers with the poller
		f.Close()
		if err != nil {
			return fail(err)
		}
		if c, ok := pc.(*net.UDPConn); ok {
			found = append(found, sharedSocket{c, inode})
			continue
		}
		pc.Close()
	}
	if len(found) == 0 {
		return nil, fmt.Errorf("no UDP socket of this process is bound to %s", addr)
	}
	return found, nil
}

// heldByServer says whether a descriptor other than codel's holds the
// stolen socket of inode: a server of CoreDNS's still has it. codel holds
// one for each reader that stole it (stolen.n) and one for its waker. A
// server whose socket caddy could not hand to a reload's (codel's TCP
// limit wraps it) closes it as it stops, but the next codel had stolen it
// too, and each codel after stole it again from the one before: every
// reload with codel in both Corefiles left one more socket open, stolen,
// and sent an empty datagram a second, for the process's life
// (TestAStolenSocketNoServerHoldsIsLetGo). Such a socket is stolen no
// more, and closes with the last codel that holds it. stolen is locked.
// Where /proc cannot be read it says yes, as before.
func heldByServer(inode string) bool {
	codel := stolen.n[inode]
	if stolen.wake[inode] != nil {
		codel++
	}
	n, err := descriptorsOf(inode)
	return err != nil || n > codel
}

// descriptorsOf counts this process's descriptors of the socket of inode.
func descriptorsOf(inode string) (int, error) {
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	n := 0
	for _, fd := range fds {
		if other, ok := socketOf(fd.Name()); ok && other == inode {
			n++
		}
	}
	return n, nil
}

// anotherListens says whether a UDP socket of this process listens on
// addr, taking any client's datagrams (not connected), other than the one
// of inode and codel's own.
func anotherListens(addr netip.AddrPort, inode string) bool {
	inodes, err := boundInodes(procTable(addr), addr, true)
	if err != nil {
		return false
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return false
	}
	for _, fd := range fds {
		other, ok := socketOf(fd.Name())
		if !ok {
			continue
		}
		if _, own := ownSockets.Load(other); inodes[other] && other != inode && !own {
			return true
		}
	}
	return false
}

// socketOf returns the inode of the socket that descriptor fd (its name
// in /proc/self/fd) refers to, and false for any other file.
func socketOf(fd string) (string, bool) {
	link, err := os.Readlink("/proc/self/fd/" + fd)
	if err != nil || !strings.HasPrefix(link, "socket:[") {
		return "", false
	}
	return strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]"), true
}

// procTable is the /proc table that lists the UDP sockets bound to addr.
func procTable(addr netip.AddrPort) string {
	if addr.Addr().Is6() {
		return "/proc/self/net/udp6"
	}
	return "/proc/self/net/udp"
}

// boundInodes returns the inodes of the sockets in a /proc/net/udp table
// whose local address is addr; listening: only those connected to none.
func boundInodes(table string, addr netip.AddrPort, listening bool) (map[string]bool, error) {
	f, err := os.Open(table)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	found := map[string]bool{}
	sc := bufio.NewScanner(f)
	sc.Scan() // the header
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) < 10 {
			continue
		}
		local, err := parseProcAddr(fields[1])
		if err == nil && local == addr && (!listening || strings.Trim(fields[2], "0:") == "") {
			found[fields[9]] = true
		}
	}
	return found, sc.Err()
}

// parseProcAddr parses "0100007F:0035": the address as the kernel prints
// it (32-bit words in host order), a colon, the port in hex.
func parseProcAddr(s string) (netip.AddrPort, error) {
	a, p, ok := strings.Cut(s, ":")
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	raw, err := hex.DecodeString(a)
	if err != nil || (len(raw) != 4 && len(raw) != 16) {
		return netip.AddrPort{}, fmt.Errorf("bad address %q", s)
	}
	for i := 0; i < len(raw); i += 4 {
		binary.BigEndian.PutUint32(raw[i:], binary.NativeEndian.Uint32(raw[i:]))
	}
	var port uint16
	if _, err := fmt.Sscanf(p, "%X", &port); err != nil {
		return netip.AddrPort{}, fmt.Errorf("bad port %q", s)
	}
	ip, _ := netip.AddrFromSlice(raw)
	return netip.AddrPortFrom(ip.Unmap(), port), nil
}
