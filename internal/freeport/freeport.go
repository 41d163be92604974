// Package freeport finds a port of 127.0.0.1 that tests can bind a DNS
// server to: free for both UDP and TCP a moment ago.
package freeport

import (
	"fmt"
	"net"
	"testing"
)

// Get returns a port free for both UDP and TCP on 127.0.0.1. Another
// test's connection may still take it before the caller binds it.
func Get(tb testing.TB) int {
	tb.Helper()
	for range 50 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", fmt.Sprintf("127.0.0.1:%d", port))
		l.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	tb.Fatal("no port free for both UDP and TCP")
	return 0
}
