package codel

import (
	"bytes"
	"net"
	"net/netip"
	"testing"
	"time"

	"golang.org/x/net/ipv4"
	"golang.org/x/net/ipv6"
	"golang.org/x/sys/unix"

	"github.com/ontimedns/ontime/internal/raceflag"
)

// TestPacketInfoInPlace: the address a query came to is read from the
// control messages the kernel writes, on an IPv4 socket bound to every
// address and on a dual-stack one (an IPv4 client's unmapped); the
// control message that sends an answer from an address is the one x/net
// marshals; neither allocates.
func TestPacketInfoInPlace(t *testing.T) {
	for _, src := range []string{"127.0.0.2", "192.0.2.1", "::1", "2001:db8::53"} {
		a := netip.MustParseAddr(src)
		var want []byte
		if a.Is4() {
			want = (&ipv4.ControlMessage{Src: net.IP(a.AsSlice())}).Marshal()
		} else {
			want = (&ipv6.ControlMessage{Src: net.IP(a.AsSlice())}).Marshal()
		}
		if got := appendSource(nil, a); !bytes.Equal(got, want) {
			t.Errorf("from %s: control message %x, want x/net's %x", src, got, want)
		}
	}
	if got := appendSource([]byte("kept"), netip.Addr{}); string(got) != "kept" {
		t.Errorf("no source: %q appended", got[4:])
	}

	cases := []struct {
		network, bind, to string
		opts              [][2]int // level, option
	}{
		{"udp4", "0.0.0.0:0", "127.0.0.2", [][2]int{{unix.IPPROTO_IP, unix.IP_PKTINFO}}},
		{"udp6", "[::]:0", "127.0.0.2", [][2]int{{unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO}, {unix.IPPROTO_IP, unix.IP_PKTINFO}}},
		{"udp6", "[::]:0", "::1", [][2]int{{unix.IPPROTO_IPV6, unix.IPV6_RECVPKTINFO}, {unix.IPPROTO_IP, unix.IP_PKTINFO}}},
	}
	for _, c := range cases {
		network := c.network
		if netip.MustParseAddr(c.to).Is4() && network == "udp6" {
			network = "udp" // dual-stack
		}
		conn, err := net.ListenUDP(network, net.UDPAddrFromAddrPort(netip.MustParseAddrPort(c.bind)))
		if err != nil {
			t.Logf("%s %s: %v", network, c.bind, err)
			continue
		}
		defer conn.Close()
		raw, err := conn.SyscallConn()
		if err != nil {
			t.Fatal(err)
		}
		raw.Control(func(fd uintptr) {
			for _, o := range c.opts {
				unix.SetsockoptInt(int(fd), o[0], o[1], 1)
			}
		})
		to := netip.AddrPortFrom(netip.MustParseAddr(c.to), uint16(conn.LocalAddr().(*net.UDPAddr).Port))
		client, err := net.DialUDP("udp", nil, net.UDPAddrFromAddrPort(to))
		if err != nil {
			t.Logf("to %s: %v", to, err)
			continue
		}
		defer client.Close()
		if _, err := client.Write([]byte("query")); err != nil {
			t.Logf("to %s: %v", to, err)
			continue
		}
		conn.SetReadDeadline(time.Now().Add(5 * time.Second))
		oob := make([]byte, oobSize)
		_, oobn, _, _, err := conn.ReadMsgUDPAddrPort(make([]byte, 64), oob)
		if err != nil {
			t.Fatalf("%s %s: %v", network, c.bind, err)
		}
		if got := destination(oob[:oobn]); got != to.Addr() {
			t.Errorf("%s socket on %s, a query to %s: destination %v", network, c.bind, c.to, got)
		}
		if raceflag.Enabled {
			continue
		}
		room := make([]byte, 0, oobSize)
		if n := testing.AllocsPerRun(100, func() { room = appendSource(room[:0], destination(oob[:oobn])) }); n != 0 {
			t.Errorf("%s: %v allocations to read a destination and write it as a source", c.to, n)
		}
	}
	if got := destination(nil); got.IsValid() {
		t.Errorf("no control message: destination %v", got)
	}
}
