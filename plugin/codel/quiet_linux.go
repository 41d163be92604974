//go:build linux

package codel

import (
	"errors"
	"net/netip"
	"os"

	"golang.org/x/sys/unix"
)

// A reader's answers go out of a socket of their own that nobody waits on:
// its quiet socket. The reader's socket is in Go's poller, and so has a
// waiter (the poller's epoll) all its life. For every datagram it sends,
// the kernel then wakes that waiter when the datagram's memory is given
// back (sock_wfree: the socket is writable again): two interrupt-masking
// locks an answer, though nobody waits to write, and over loopback in the
// sender's own system call. A socket that no epoll and no thread waits on
// skips the wake-up: sock_wfree went from 3 to 5% of the server's time
// (Knot's: 5%) to under 0.7% (bench/README.md, 2026-12-05).
//
// The quiet socket must send from the reader's address and port, and take
// no query. Beside a reader bound to an IPv4 address A it is an IPv6
// socket bound to A mapped (::ffff:A), with SO_REUSEPORT:
//   - it joins no SO_REUSEPORT group of the readers' (a group holds
//     sockets of one family bound to one address), so it takes no share
//     of the hash that spreads queries over them, and a reader bound
//     after it (a reload's) joins theirs;
//   - an IPv4 datagram to A matches both, and the kernel scores an IPv4
//     socket above an IPv6 one (udp.c's compute_score), so while a reader
//     listens on A the quiet socket is handed nothing. It is opened after
//     its reader's socket and taken off the address before it is retired
//     (connected to its own: reader.closeQuiet).
// It is not connected while it serves: a connected socket would be picked
// over the readers for its peer, and would number its datagrams' IPv4 IDs
// in one sequence for every client, which an off-path attacker forging a
// fragment of an answer could follow; unconnected, the kernel numbers
// them by destination, as the reader's own.
//
// Beside a reader bound to every address, IPv4's (0.0.0.0) or both
// families' ([::], CoreDNS's own when a Corefile binds nothing), it is an
// IPv6 socket bound to every IPv4 address mapped (::ffff:0.0.0.0):
//   - beside 0.0.0.0 the kernel scores the IPv4 readers above it, as
//     beside one address;
//   - beside [::] the two score alike for an IPv4 datagram, and the kernel
//     hands it to the first socket of the address's hash chain that scores
//     highest. An IPv6 socket with SO_REUSEPORT is added at the chain's
//     tail (udp.c's udp_lib_get_port, so that IPv4 sockets come first), so
//     the quiet socket, opened after its reader, comes after it; and it is
//     taken off before its reader. (CoreDNS's socket, given back as the
//     last reader closes, goes to the chain's head.) Opened first, it took
//     half the queries: TestAQuietSocketTakesNoQuery checks the order. A
//     reload's new socket, bound after it, comes after it too: left on
//     the chain a moment after its reader (closed under a send), it took
//     every query (TestAQuietSocketUnderASendTakesNoQueryOnceStopped);
//   - it matches no IPv6 datagram (its address is no IPv6 one), and
//     cannot send to an IPv6 client: those answers go out of the reader's
//     socket (outbox.send).
// Each answer still leaves from the address its query came to: the
// IP_PKTINFO control message the reader's answers carry is taken by an
// IPv6 socket sending to an IPv4 client too.
// Beside a reader bound to one IPv6 address there is no such place: an
// IPv6 socket bound to it joined the readers' group on this kernel, with
// IPV6_V6ONLY set or not (bench/README.md), and the family and address
// are the readers' own. Its answers go out of its own socket, as do an
// IPv6 client's beside [::].
//
// It is opened blocking, so that os.NewFile leaves it out of the poller;
// each sendmmsg is made with MSG_DONTWAIT all the same, and what it does
// not take (its buffer full, an answer refused) goes out of the reader's
// socket, which can wait (outbox.send). Its *os.File keeps the descriptor
// from being closed, and its number reused, under a send.

// errNoQuietPlace: a reader bound to one IPv6 address.
var errNoQuietPlace = errors.New("no quiet socket beside one IPv6 address")

// quietSocket opens the quiet socket for a reader bound to addr.
func quietSocket(addr netip.AddrPort) (*os.File, error) {
	a := addr.Addr()
	if a.IsUnspecified() {
		a = netip.IPv4Unspecified()
	}
	if !a.Is4() {
		return nil, errNoQuietPlace
	}
	mapped := netip.AddrPortFrom(netip.AddrFrom16(a.As16()), addr.Port()) // ::ffff:A
	fd, err := unix.Socket(unix.AF_INET6, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.IPPROTO_UDP)
	if err != nil {
		return nil, err
	}
	err = unix.SetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
	if err == nil {
		err = unix.SetsockoptInt(fd, unix.IPPROTO_IPV6, unix.IPV6_V6ONLY, 0) // a mapped address needs it
	}
	if err == nil {
		err = unix.Bind(fd, sockaddrOf(mapped))
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), "codel-quiet"), nil
}

// quietAway connects the quiet socket q to its own address, an IPv4 one
// (127.0.0.1 where it is bound to every one): it then matches no client's
// datagram (reader.closeQuiet).
func quietAway(q *os.File) error {
	raw, err := q.SyscallConn()
	if err != nil {
		return err
	}
	var at netip.AddrPort
	var serr error
	if err := raw.Control(func(fd uintptr) {
		var sa unix.Sockaddr
		if sa, serr = unix.Getsockname(int(fd)); serr == nil {
			if s6, ok := sa.(*unix.SockaddrInet6); ok {
				at = netip.AddrPortFrom(netip.AddrFrom16(s6.Addr).Unmap(), uint16(s6.Port))
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return serr
	}
	return connectToSelf(q, at)
}
