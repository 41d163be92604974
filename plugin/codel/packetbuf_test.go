package codel

import (
	"bytes"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestPacketCopyBySize: a datagram of up to smallPacket octets is copied
// into a small buffer, a longer one into one of packetSize, each whole,
// and each goes back to its own pool.
func TestPacketCopyBySize(t *testing.T) {
	for _, n := range []int{12, 100, smallPacket, smallPacket + 1, 1500, packetSize} {
		b := bytes.Repeat([]byte{byte(n)}, n)
		buf := packetCopy(b)
		want := smallPacket
		if n > smallPacket {
			want = packetSize
		}
		if cap(*buf) != want || cap(*buf) < n || !bytes.Equal((*buf)[:n], b) {
			t.Errorf("%d octets: a buffer of %d, want %d holding the datagram", n, cap(*buf), want)
		}
		releasePacket(buf)
	}
}

// TestLongAndShortQueriesAnswered: through codel's reader, a query of
// 1,000 octets (an EDNS padding option) is answered as a short one is.
func TestLongAndShortQueriesAnswered(t *testing.T) {
	ctx, _ := chainServer(t, " codel\n", false)
	addr := strings.TrimPrefix(ctx.server.Addr, "dns://")
	for _, pad := range []int{0, 900} {
		m := new(dns.Msg).SetQuestion("host-1.bench.example.", dns.TypeA)
		m.SetEdns0(4096, false)
		if pad > 0 {
			o := m.IsEdns0()
			o.Option = append(o.Option, &dns.EDNS0_PADDING{Padding: make([]byte, pad)})
		}
		packed, _ := m.Pack()
		c := &dns.Client{UDPSize: 4096}
		in, _, err := c.Exchange(m, addr)
		if err != nil || in.Id != m.Id || len(in.Question) != 1 || in.Question[0].Name != m.Question[0].Name ||
			(in.Rcode != dns.RcodeSuccess && in.Rcode != dns.RcodeNameError) {
			t.Errorf("a query of %d octets: %v, %v", len(packed), in, err)
		}
	}
}
