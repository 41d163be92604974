//go:build linux

package codel

import (
	"bufio"
	"encoding/binary"
	"encoding/hex"
	"fmt"
	"net"
	"net/netip"
	"os"
	"strings"
	"syscall"
)

// sharedSocket returns a new *net.UDPConn on the UDP socket this process
// has bound to addr (the one CoreDNS's server reads), found through /proc:
// the socket's inode in /proc/self/net/udp{,6}, then the descriptor that
// links to it in /proc/self/fd. Reading from it takes packets from the same
// receive queue as CoreDNS's own reader; writing sends from the same
// address. CoreDNS exposes neither the socket nor a hook on its read loop.
func sharedSocket(addr netip.AddrPort) (*net.UDPConn, error) {
	table := "/proc/self/net/udp"
	if addr.Addr().Is6() {
		table = "/proc/self/net/udp6"
	}
	inodes, err := boundInodes(table, addr)
	if err != nil {
		return nil, err
	}
	fds, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return nil, err
	}
	for _, fd := range fds {
		link, err := os.Readlink("/proc/self/fd/" + fd.Name())
		if err != nil || !strings.HasPrefix(link, "socket:[") {
			continue
		}
		if !inodes[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] {
			continue
		}
		var n int
		fmt.Sscan(fd.Name(), &n)
		// Dup first: an *os.File closes its descriptor when collected,
		// and this one is CoreDNS's.
		dup, err := syscall.Dup(n)
		if err != nil {
			return nil, err
		}
		syscall.CloseOnExec(dup)
		f := os.NewFile(uintptr(dup), "codel "+addr.String())
		pc, err := net.FilePacketConn(f) // dups again, and registers with the poller
		f.Close()
		if err != nil {
			return nil, err
		}
		if c, ok := pc.(*net.UDPConn); ok {
			return c, nil
		}
		pc.Close()
	}
	return nil, fmt.Errorf("no UDP socket of this process is bound to %s", addr)
}

// boundInodes returns the inodes of the sockets in a /proc/net/udp table
// whose local address is addr.
func boundInodes(table string, addr netip.AddrPort) (map[string]bool, error) {
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
		if err == nil && local == addr {
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
