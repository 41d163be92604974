//go:build !linux

package rxstamp

import "syscall"

// Elsewhere no datagram is stamped: its arrival is when it is read.
func Enable(syscall.RawConn) bool   { return false }
func Received([]byte) (int64, bool) { return 0, false }
