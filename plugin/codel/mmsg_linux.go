package codel

import (
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
