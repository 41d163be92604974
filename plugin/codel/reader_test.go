package codel

import (
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/miekg/dns"
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
