package codel

import (
	"bytes"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestPacketHoldsBySize: a datagram of up to smallPacket octets is copied
// into the packet's own room, a longer one into a pooled buffer of
// packetSize, each whole; the room stays with the packet when it is
// released, and a packet made again for the next query holds that one's
// octets.
func TestPacketHoldsBySize(t *testing.T) {
	p := new(packet)
	for _, n := range []int{12, 100, smallPacket, smallPacket + 1, 1500, packetSize, 40} {
		b := bytes.Repeat([]byte{byte(n)}, n)
		p.hold(b)
		own := p.buf == &p.roomBuf && &(*p.buf)[0] == &p.room[0]
		if n <= smallPacket && !own || n > smallPacket && (own || cap(*p.buf) != packetSize) {
			t.Errorf("%d octets: held in its own room %v, a buffer of %d", n, own, cap(*p.buf))
		}
		if p.n != n || !bytes.Equal((*p.buf)[:p.n], b) {
			t.Errorf("%d octets: holds %d, not the datagram", n, p.n)
		}
		p.release()
		p.packetState = packetState{} // as end does
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
