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
