// Package freeport finds a port of 127.0.0.1 that tests can bind a DNS
// server to: free for both UDP and TCP a moment ago.
package freeport

import (
	"fmt"
	"net"
	"sync"
	"testing"
)

// given are the ports Get has returned in this process. A port is free
// again once its probe closes, and the kernel may pick it for the next
// probe: a test that takes two ports before binding either (a primary
// and its secondary) got the same one twice, and one of its servers
// failed to bind ("address already in use").
var given = struct {
	sync.Mutex
	ports map[int]bool
}{ports: map[int]bool{}}

// Get returns a port free for both UDP and TCP on 127.0.0.1, and not
// returned before in this process. Another test's connection may still
// take it before the caller binds it.
func Get(tb testing.TB) int {
	tb.Helper()
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		l.Close()
		if err != nil {
			continue
		}
		u.Close()
		given.Lock()
		again := given.ports[port]
		given.ports[port] = true
		given.Unlock()
		if !again {
			return port
		}
	}
	tb.Fatal("no port free for both UDP and TCP")
	return 0
}
