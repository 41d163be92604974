//go:build linux

package connlimit

import (
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"
)

// TestKernelAlive asks the real kernel about real loopback connections:
// open, closed by the client (still the server's to close), and closed by
// the server; over IPv4, and IPv4-mapped on a dual-stack listener.
func TestKernelAlive(t *testing.T) {
	k, err := NewKernel()
	if err != nil {
		t.Fatal(err)
	}
	defer k.Close()
	for _, tc := range []struct{ network, listen, dial string }{
		{"tcp4", "127.0.0.1:0", "127.0.0.1"},
		{"tcp", "[::]:0", "127.0.0.1"}, // the client seen as ::ffff:127.0.0.1
		{"tcp6", "[::1]:0", "::1"},
	} {
		t.Run(tc.listen, func(t *testing.T) {
			ln, err := net.Listen(tc.network, tc.listen)
			if err != nil {
				t.Skipf("%s: %v", tc.listen, err)
			}
			defer ln.Close()
			port := ln.Addr().(*net.TCPAddr).Port
			dial := func() (client, server net.Conn, c Conn) {
				client, err := net.Dial("tcp", net.JoinHostPort(tc.dial, itoa(port)))
				if err != nil {
					t.Fatal(err)
				}
				server, err = ln.Accept()
				if err != nil {
					t.Fatal(err)
				}
				c = Conn{server.RemoteAddr().(*net.TCPAddr).AddrPort(), server.LocalAddr().(*net.TCPAddr).AddrPort()}
				return client, server, c
			}
			alive := func(c Conn) bool {
				t.Helper()
				a, err := k.Alive(c)
				if err != nil {
					t.Fatal(err)
				}
				return a
			}

			client, server, c := dial()
			if !alive(c) {
				t.Fatalf("%v: an open connection counted closed", c)
			}
			client.Close()
			time.Sleep(10 * time.Millisecond)
			if !alive(c) {
				t.Fatalf("%v: closed by the client only (CLOSE_WAIT) counted closed", c)
			}
			server.Close()
			if alive(c) {
				t.Fatalf("%v: closed by both counted open", c)
			}

			client, server, c = dial()
			defer client.Close()
			server.Close() // the server first: FIN_WAIT on its side
			if alive(c) {
				t.Fatalf("%v: closed by the server counted open", c)
			}
			gone := Conn{netip.AddrPortFrom(c.Client.Addr(), 1), c.Local}
			if alive(gone) {
				t.Fatalf("%v: a connection that never was counted open", gone)
			}
		})
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// BenchmarkKernelAlive: one question to the kernel, what a client at its
// limit costs per connection it holds.
func BenchmarkKernelAlive(b *testing.B) {
	k, err := NewKernel()
	if err != nil {
		b.Fatal(err)
	}
	defer k.Close()
	ln, err := net.Listen("tcp4", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp4", ln.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	defer client.Close()
	server, err := ln.Accept()
	if err != nil {
		b.Fatal(err)
	}
	defer server.Close()
	c := Conn{server.RemoteAddr().(*net.TCPAddr).AddrPort(), server.LocalAddr().(*net.TCPAddr).AddrPort()}
	b.ReportAllocs()
	for b.Loop() {
		if open, err := k.Alive(c); !open || err != nil {
			b.Fatal(open, err)
		}
	}
}
