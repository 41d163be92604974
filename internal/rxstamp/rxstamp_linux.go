// Package rxstamp reads the time the kernel received a datagram
// (SO_TIMESTAMPNS), so that the time a datagram waited in a socket's
// buffer, unread, is counted: by codel in a query's sojourn, and by the
// load tool in an answer's latency.
package rxstamp

import (
	"encoding/binary"
	"syscall"

	"golang.org/x/sys/unix"

	"github.com/ontimedns/ontime/internal/cmsg"
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
	ts, ok := cmsg.Find(oob, unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS)
	if !ok || len(ts) < 16 {
		return 0, false
	}
	return int64(binary.NativeEndian.Uint64(ts))*1e9 + int64(binary.NativeEndian.Uint64(ts[8:])), true
}
