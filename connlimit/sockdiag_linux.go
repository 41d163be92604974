//go:build linux

package connlimit

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// Supported says whether this system can tell an open connection from a
// closed one (Kernel.Alive); where it cannot, the limit is not applied.
const Supported = true

// Kernel asks Linux's sock_diag (the interface ss(8) reads) about one TCP
// connection by its addresses: one request and one reply on a netlink
// socket, an exact hash lookup in the kernel, no walk of the socket table.
type Kernel struct {
	mu  sync.Mutex
	fd  int
	seq uint32
	buf []byte
}

// NewKernel opens the netlink socket.
func NewKernel() (*Kernel, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return nil, fmt.Errorf("sock_diag: %w", err)
	}
	return &Kernel{fd: fd, buf: make([]byte, 4096)}, nil
}

// Close closes the netlink socket.
func (k *Kernel) Close() error { return unix.Close(k.fd) }

// TCP states, as include/net/tcp_states.h numbers them.
const (
	tcpEstablished = 1
	tcpSynRecv     = 3
	tcpCloseWait   = 8
)

const (
	sizeofNlmsghdr   = 16
	sizeofDiagReqV2  = 56
	sizeofDiagMsgHdr = 4 // family, state, timer, retrans: then the socket id
)

// Alive reports whether the server's side of c is still open: established,
// or closed by the client but not yet by the server (CLOSE_WAIT). A
// connection the server has closed (FIN_WAIT, TIME_WAIT, LAST_ACK) or that
// is gone is not.
func (k *Kernel) Alive(c Conn) (bool, error) {
	local, client := c.Local.Addr(), c.Client.Addr()
	family := byte(unix.AF_INET6)
	if local.Unmap().Is4() && client.Unmap().Is4() && !(local.Is4In6() || client.Is4In6()) {
		family = unix.AF_INET
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	k.seq++
	req := k.buf[:sizeofNlmsghdr+sizeofDiagReqV2]
	clear(req)
	ne := binary.NativeEndian
	ne.PutUint32(req[0:], uint32(len(req)))
	ne.PutUint16(req[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(req[6:], unix.NLM_F_REQUEST)
	ne.PutUint32(req[8:], k.seq)
	r := req[sizeofNlmsghdr:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], ^uint32(0)) // every state
	id := r[8:]
	binary.BigEndian.PutUint16(id[0:], c.Local.Port()) // the socket's source is the server's side
	binary.BigEndian.PutUint16(id[2:], c.Client.Port())
	putAddr(id[4:20], local, family)
	putAddr(id[20:36], client, family)
	ne.PutUint32(id[40:], ^uint32(0)) // no cookie to check
	ne.PutUint32(id[44:], ^uint32(0))
	if err := unix.Sendto(k.fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return true, fmt.Errorf("sock_diag: %w", err)
	}
	for {
		n, _, err := unix.Recvfrom(k.fd, k.buf, 0)
		if err != nil {
			return true, fmt.Errorf("sock_diag: %w", err)
		}
		msgs, err := syscall.ParseNetlinkMessage(k.buf[:n])
		if err != nil {
			return true, fmt.Errorf("sock_diag: %w", err)
		}
		for _, m := range msgs {
			if m.Header.Seq != k.seq {
				continue // a late reply to an earlier request
			}
			switch m.Header.Type {
			case unix.NLMSG_ERROR:
				if len(m.Data) < 4 {
					return true, errors.New("sock_diag: short error")
				}
				errno := unix.Errno(-int32(ne.Uint32(m.Data)))
				if errno == unix.ENOENT {
					return false, nil
				}
				return true, fmt.Errorf("sock_diag: %w", errno)
			case unix.SOCK_DIAG_BY_FAMILY:
				if len(m.Data) < sizeofDiagMsgHdr {
					return true, errors.New("sock_diag: short reply")
				}
				switch m.Data[1] {
				case tcpEstablished, tcpSynRecv, tcpCloseWait:
					return true, nil
				}
				return false, nil
			}
		}
	}
}

// putAddr writes an address as inet_diag_sockid holds it: four 32-bit
// words in network order, an IPv4 address in the first.
func putAddr(b []byte, a netip.Addr, family byte) {
	if family == unix.AF_INET {
		v4 := a.Unmap().As4()
		copy(b, v4[:])
		return
	}
	v6 := a.As16()
	copy(b, v6[:])
}
