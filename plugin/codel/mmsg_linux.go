package codel

import (
	"encoding/binary"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

func recvmmsg(fd uintptr, hdrs []mmsghdr) (int, error) { return mmsg(fd, unix.SYS_RECVMMSG, hdrs) }
func sendmmsg(fd uintptr, hdrs []mmsghdr) (int, error) { return mmsg(fd, unix.SYS_SENDMMSG, hdrs) }

// mmsg makes the recvmmsg or sendmmsg system call on hdrs, not waiting.
func mmsg(fd uintptr, call uintptr, hdrs []mmsghdr) (int, error) {
	n, _, errno := unix.Syscall6(call, fd, uintptr(unsafe.Pointer(&hdrs[0])), uintptr(len(hdrs)), unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}

// stampArrivals asks the kernel to stamp every datagram on the socket with
// the time it was received (SO_TIMESTAMPNS), read back by receivedAt. The
// kernel turns stamping on a moment later (deferred work): until then, a
// datagram is stamped when it is read, which is what codel did anyway.
func stampArrivals(raw syscall.RawConn) bool {
	ok := false
	raw.Control(func(fd uintptr) {
		ok = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil
	})
	return ok
}

// receivedAt returns the time the kernel received a datagram (Unix
// nanoseconds), from its control messages.
func receivedAt(oob []byte) (int64, bool) {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		n := int(h.Len)
		if n < unix.SizeofCmsghdr || n > len(oob) {
			return 0, false
		}
		if h.Level == unix.SOL_SOCKET && h.Type == unix.SCM_TIMESTAMPNS && n >= unix.CmsgLen(16) {
			ts := oob[unix.CmsgLen(0):]
			return int64(binary.NativeEndian.Uint64(ts))*1e9 + int64(binary.NativeEndian.Uint64(ts[8:])), true
		}
		oob = oob[min(unix.CmsgSpace(n-unix.SizeofCmsghdr), len(oob)):]
	}
	return 0, false
}
