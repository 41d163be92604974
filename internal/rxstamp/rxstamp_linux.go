// Package rxstamp reads the time the kernel received a datagram
// (SO_TIMESTAMPNS), so that the time a datagram waited in a socket's
// buffer, unread, is counted: by codel in a query's sojourn, and by the
// load tool in an answer's latency.
package rxstamp

import (
	"encoding/binary"
	"syscall"
	"unsafe"

	"golang.org/x/sys/unix"
)

// Enable asks the kernel to stamp every datagram on the socket with the
// time it was received. The kernel turns stamping on a moment later
// (deferred work): until then, a datagram is stamped when it is read.
func Enable(raw syscall.RawConn) bool {
	ok := false
	raw.Control(func(fd uintptr) {
		ok = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_TIMESTAMPNS, 1) == nil
	})
	return ok
}

// Received returns the time the kernel received a datagram (Unix
// nanoseconds), from its control messages.
func Received(oob []byte) (int64, bool) {
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
