package codel

import (
	"net"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/miekg/dns"
	"golang.org/x/sys/unix"
)

// TestServersSocketIsStamped: the socket codel reads for a server is its
// own and the kernel stamps its datagrams (Linux), and queries read from
// it are answered.
func TestServersSocketIsStamped(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reader runs on Linux")
	}
	ctx, _ := chainServer(t, " codel\n", false)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(ctx.server.Addr, "dns://"))
	if err != nil {
		t.Fatal(err)
	}
	if r := readerOn(t, port); !r.stamped {
		t.Fatalf("codel's socket for %s is not stamped (its own: %v)", r.server.Addr, r.undo != nil)
	}
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	in, err := dns.Exchange(m, net.JoinHostPort("127.0.0.1", port))
	if err != nil || in.Rcode != dns.RcodeRefused {
		t.Fatalf("answer %v, %v; want REFUSED, for a name of no zone here", in, err)
	}
}

// TestOwnSocketHasRoom: codel's own socket asks for a receive buffer of
// receiveBuffer, so that a moment the server does not run is counted by
// CoDel rather than lost in the kernel; it gets that, or the most the
// kernel allows (net.core.rmem_max; the kernel doubles what it grants).
func TestOwnSocketHasRoom(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the reader runs on Linux")
	}
	b, err := os.ReadFile("/proc/sys/net/core/rmem_max")
	if err != nil {
		t.Skip(err)
	}
	most, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil {
		t.Fatal(err)
	}
	ctx, _ := chainServer(t, " codel\n", false)
	_, port, err := net.SplitHostPort(strings.TrimPrefix(ctx.server.Addr, "dns://"))
	if err != nil {
		t.Fatal(err)
	}
	r := readerOn(t, port)
	if r.undo == nil {
		t.Skip("codel shares CoreDNS's socket here")
	}
	var got int
	var serr error
	if err := r.raw.Control(func(fd uintptr) { got, serr = unix.GetsockoptInt(int(fd), unix.SOL_SOCKET, unix.SO_RCVBUF) }); err != nil || serr != nil {
		t.Fatal(err, serr)
	}
	if want := 2 * min(receiveBuffer, most); got < want {
		t.Errorf("receive buffer %d octets, want %d (asked %d, rmem_max %d)", got, want, receiveBuffer, most)
	}
}
