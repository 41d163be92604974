package codel

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

func recvmmsg(fd uintptr, hdrs []mmsghdr) (int, error) { return mmsg(fd, unix.SYS_RECVMMSG, hdrs) }
func sendmmsg(fd uintptr, hdrs []mmsghdr) (int, error) { return mmsg(fd, unix.SYS_SENDMMSG, hdrs) }

// mmsg makes the recvmmsg or sendmmsg system call on hdrs, not waiting.
// A raw call: it never blocks (MSG_DONTWAIT on a non-blocking socket), so
// the scheduler need not know of it. Through Syscall6 each call marked its
// P as in a system call, and one that ran past 20 µs (a sendmmsg of a batch
// delivers it over loopback in the same call) had sysmon hand the P to
// another thread: wake-ups and thread switches on a core that was busy.
func mmsg(fd uintptr, call uintptr, hdrs []mmsghdr) (int, error) {
	n, _, errno := unix.RawSyscall6(call, fd, uintptr(unsafe.Pointer(&hdrs[0])), uintptr(len(hdrs)), unix.MSG_DONTWAIT, 0, 0)
	if errno != 0 {
		return 0, errno
	}
	return int(n), nil
}
