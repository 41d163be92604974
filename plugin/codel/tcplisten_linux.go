package codel

import (
	"context"
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"syscall"

	"golang.org/x/sys/unix"
)

// incomingCPU says that the kernel can steer connections to codel's
// listeners (tcplisten.go).
const incomingCPU = true

// listenOnCPU opens a TCP listener on hostport, in the SO_REUSEPORT group
// of CoreDNS's own there, for the connections whose SYN cpu took.
func listenOnCPU(hostport string, cpu int) (net.Listener, error) {
	lc := net.ListenConfig{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_REUSEPORT, 1)
			if serr == nil {
				serr = unix.SetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_INCOMING_CPU, cpu)
			}
		})
		if err != nil {
			return err
		}
		return serr
	}}
	return lc.Listen(context.Background(), "tcp", hostport)
}

// steersByCPU says whether the kernel gives a connection to the listener
// of the CPU that took its SYN (SO_INCOMING_CPU in a SO_REUSEPORT group):
// Linux 6.2 and later. Before, it picks by the connection's hash, and
// CoreDNS's listener takes its share.
func steersByCPU() bool {
	var u unix.Utsname
	if unix.Uname(&u) != nil {
		return true // not known: as the kernels of today
	}
	return releaseAtLeast(unix.ByteSliceToString(u.Release[:]), 6, 2)
}

// releaseAtLeast says whether the kernel release (6.18.44-fc-v1252)
// is major.minor or later.
func releaseAtLeast(release string, major, minor int) bool {
	parts := strings.SplitN(release, ".", 3)
	if len(parts) < 2 {
		return true
	}
	ma, err1 := strconv.Atoi(parts[0])
	mi, err2 := strconv.Atoi(strings.TrimRightFunc(parts[1], func(r rune) bool { return r < '0' || r > '9' }))
	if err1 != nil || err2 != nil {
		return true
	}
	return ma > major || ma == major && mi >= minor
}

// possibleCPUs is how many CPUs the kernel may run a SYN's processing on:
// every CPU it numbers (/sys/devices/system/cpu/possible), not only those
// this process may run on.
func possibleCPUs() int {
	b, err := os.ReadFile("/sys/devices/system/cpu/possible")
	if err != nil {
		return runtime.NumCPU()
	}
	n := 0
	for _, part := range strings.Split(strings.TrimSpace(string(b)), ",") {
		_, last, _ := strings.Cut(part, "-")
		if last == "" {
			last = part
		}
		if i, err := strconv.Atoi(last); err == nil && i+1 > n {
			n = i + 1
		}
	}
	if n == 0 || n > 4096 {
		return runtime.NumCPU()
	}
	return n
}
