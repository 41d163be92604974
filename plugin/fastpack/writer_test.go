package fastpack

import (
	"context"
	"fmt"
	"net"
	"slices"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/test"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/ontimedns/ontime/internal/chain"
	"github.com/ontimedns/ontime/internal/raceflag"
	"github.com/ontimedns/ontime/replay"
)

// capture is the socket end of a writer chain: it keeps the bytes that
// would have been sent, packed by miekg/dns where WriteMsg is called.
type capture struct {
	test.ResponseWriter
	out []byte
}

func (c *capture) WriteMsg(m *dns.Msg) error {
	b, err := m.Pack()
	c.out = b
	return err
}

func (c *capture) Write(b []byte) (int, error) {
	c.out = append([]byte(nil), b...)
	return len(b), nil
}

// answer is a plugin that writes a fixed response to any query.
type answer struct{ rrs []dns.RR }

func (a answer) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	m.Answer = a.rrs
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}
func (a answer) Name() string { return "answer" }

// serve sends r through h on a ScrubWriter, as CoreDNS's server does, and
// returns the bytes that reached the socket, unpacked.
func serve(t *testing.T, h plugin.Handler, r *dns.Msg, tcp bool) *dns.Msg {
	t.Helper()
	c := &capture{ResponseWriter: test.ResponseWriter{TCP: tcp}}
	if _, err := h.ServeDNS(context.Background(), request.NewScrubWriter(r, c), r); err != nil {
		t.Fatal(err)
	}
	m := new(dns.Msg)
	if err := m.Unpack(c.out); err != nil {
		t.Fatalf("unpacking what was sent: %v", err)
	}
	return m
}

func txtSet(n int) []dns.RR {
	var rrs []dns.RR
	for i := range n {
		rrs = append(rrs, test.TXT(fmt.Sprintf("big.example.org. 300 IN TXT \"record %03d with some padding to make it longer\"", i)))
	}
	return rrs
}

// TestSameAsScrubWriter: what fastpack sends is what CoreDNS's own path
// (ScrubWriter, then Pack) sends, for sizes that fit and that truncate, with
// and without EDNS, over UDP and TCP.
func TestSameAsScrubWriter(t *testing.T) {
	rrsets := map[string][]dns.RR{
		"small": {test.A("www.example.org. 300 IN A 192.0.2.1")},
		"big":   txtSet(40),
	}
	for name, rrs := range rrsets {
		for _, bufsize := range []uint16{0, 512, 1232, 4096} {
			for _, tcp := range []bool{false, true} {
				t.Run(fmt.Sprintf("%s/edns=%d/tcp=%v", name, bufsize, tcp), func(t *testing.T) {
					r := new(dns.Msg)
					r.SetQuestion("www.example.org.", dns.TypeTXT)
					if bufsize > 0 {
						r.SetEdns0(bufsize, true)
					}
					stock := serve(t, answer{rrs}, r.Copy(), tcp)
					fast := serve(t, Fastpack{Next: answer{rrs}}, r.Copy(), tcp)
					// The same TC bit; where nothing was cut, the same
					// records. Where the set did not fit, miekg/dns's
					// Truncate keeps the records that fit and fastpack
					// only whole RRsets (as Knot does): fewer, never more.
					if stock.Truncated != fast.Truncated {
						t.Fatalf("tc: stock %v, fastpack %v", stock.Truncated, fast.Truncated)
					}
					same := func(a, b dns.RR) bool { return a.String() == b.String() }
					if !stock.Truncated && !slices.EqualFunc(stock.Answer, fast.Answer, same) {
						t.Fatalf("answers differ:\nstock %v\nfast  %v", stock.Answer, fast.Answer)
					}
					if stock.Truncated && (len(fast.Answer) > len(stock.Answer) || !slices.EqualFunc(stock.Answer[:len(fast.Answer)], fast.Answer, same)) {
						t.Fatalf("truncated answer is not a prefix of stock's:\nstock %v\nfast  %v", stock.Answer, fast.Answer)
					}
					so, fo := stock.IsEdns0(), fast.IsEdns0()
					if (so == nil) != (fo == nil) || (so != nil && so.String() != fo.String()) {
						t.Fatalf("OPT differs: stock %v, fastpack %v", so, fo)
					}
				})
			}
		}
	}
}

// TestTruncatesAtClientSize checks the sizes themselves: the 40-record set
// does not fit 512 or 1232 octets over UDP, so TC is set and the message
// fits; over TCP it is whole.
func TestTruncatesAtClientSize(t *testing.T) {
	for _, c := range []struct {
		bufsize uint16
		tcp     bool
		limit   int
		tc      bool
	}{{0, false, 512, true}, {1232, false, 1232, true}, {0, true, 65535, false}} {
		r := new(dns.Msg)
		r.SetQuestion("big.example.org.", dns.TypeTXT)
		if c.bufsize > 0 {
			r.SetEdns0(c.bufsize, false)
		}
		w := &capture{ResponseWriter: test.ResponseWriter{TCP: c.tcp}}
		Fastpack{Next: answer{txtSet(40)}}.ServeDNS(context.Background(), request.NewScrubWriter(r, w), r)
		m := new(dns.Msg)
		if err := m.Unpack(w.out); err != nil {
			t.Fatal(err)
		}
		if len(w.out) > c.limit || m.Truncated != c.tc {
			t.Errorf("bufsize %d tcp %v: %d octets, tc=%v; want at most %d, tc=%v", c.bufsize, c.tcp, len(w.out), m.Truncated, c.limit, c.tc)
		}
		if c.tc && len(m.Answer) != 0 {
			t.Errorf("bufsize %d: a truncated answer keeps %d records of a set that does not fit", c.bufsize, len(m.Answer))
		}
	}
}

// TestTSIGFallsBack: a signed response is left to miekg/dns, which signs
// it, and the fallback is counted.
func TestTSIGFallsBack(t *testing.T) {
	before := testutil.ToFloat64(fallbacks.WithLabelValues("tsig"))
	r := new(dns.Msg)
	r.SetQuestion("www.example.org.", dns.TypeA)
	h := plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		m := new(dns.Msg)
		m.SetReply(r)
		m.SetTsig("key.", dns.HmacSHA256, 300, 0)
		return 0, w.WriteMsg(m)
	})
	c := &capture{}
	Fastpack{Next: h}.ServeDNS(context.Background(), c, r)
	if got := testutil.ToFloat64(fallbacks.WithLabelValues("tsig")) - before; got != 1 {
		t.Fatalf("tsig fallbacks moved by %v, want 1", got)
	}
	m := new(dns.Msg)
	if err := m.Unpack(c.out); err != nil || m.IsTsig() == nil {
		t.Fatalf("the standard path did not write the signed message: %v", err)
	}
}

// TestEncodeAllocs: once warm, a write allocates nothing.
func TestEncodeAllocs(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector makes sync.Pool drop what is put back")
	}
	r := new(dns.Msg)
	r.SetQuestion("www.example.org.", dns.TypeA)
	m := new(dns.Msg)
	m.SetReply(r)
	m.Answer = []dns.RR{test.A("www.example.org. 300 IN A 192.0.2.1")}
	w := &Writer{ResponseWriter: &discard{}, req: r}
	w.WriteMsg(m)
	if n := testing.AllocsPerRun(100, func() { w.WriteMsg(m) }); n != 0 {
		t.Fatalf("%v allocations per write, want 0", n)
	}
}

// discard drops what is written. Its addresses are fixed values: the test
// writer of CoreDNS builds a new one per call, which miekg/dns's does not.
type discard struct{ test.ResponseWriter }

var (
	localAddr  = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}
	remoteAddr = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40212}
)

func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) LocalAddr() net.Addr         { return localAddr }
func (discard) RemoteAddr() net.Addr        { return remoteAddr }

func BenchmarkWriteMsg(b *testing.B) {
	r := new(dns.Msg)
	r.SetQuestion("www.example.org.", dns.TypeA)
	r.SetEdns0(1232, false)
	m := new(dns.Msg)
	m.SetReply(r)
	m.Answer = []dns.RR{test.A("www.example.org. 300 IN A 192.0.2.1")}
	m.Ns = []dns.RR{test.NS("example.org. 300 IN NS ns1.example.org."), test.NS("example.org. 300 IN NS ns2.example.org.")}
	m.Extra = []dns.RR{test.A("ns1.example.org. 300 IN A 192.0.2.53"), test.A("ns2.example.org. 300 IN A 192.0.2.54")}
	b.Run("fastpack", func(b *testing.B) {
		w := &Writer{ResponseWriter: &discard{}, req: r}
		b.ReportAllocs()
		for b.Loop() {
			w.WriteMsg(m)
		}
	})
	b.Run("scrubwriter", func(b *testing.B) {
		w := request.NewScrubWriter(r, &packDiscard{})
		b.ReportAllocs()
		for b.Loop() {
			w.WriteMsg(m)
		}
	})
}

// packDiscard packs as miekg/dns's own writer does, then drops the bytes.
type packDiscard struct{ discard }

func (packDiscard) WriteMsg(m *dns.Msg) error {
	_, err := m.Pack()
	return err
}

// probe is a plugin that reports what fastpack's writer does for a query:
// whether it replays, and whether it writes each kept answer.
type probe struct {
	replays bool
	wrote   []bool
	answers []*replay.Answer
}

func (p *probe) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	pw, ok := chain.ReplayWriter(w)
	p.replays = ok && pw.Replays()
	for _, a := range p.answers {
		done, _ := pw.WritePacked(r, a)
		p.wrote = append(p.wrote, done)
	}
	return dns.RcodeSuccess, nil
}
func (p *probe) Name() string { return "probe" }

// A query no codel reader read is replayed where it came over a stream
// (TCP), and is written only an answer kept over a stream: one kept over
// UDP may be truncated to its request's size. Over UDP (a server without
// codel) it is not replayed.
func TestReplaysOverStreamsAlone(t *testing.T) {
	r := new(dns.Msg)
	r.SetQuestion("www.example.org.", dns.TypeA)
	wire, _ := r.Pack()
	for _, tcp := range []bool{true, false} {
		p := &probe{answers: []*replay.Answer{{Wire: wire, Stream: true}, {Wire: wire}}}
		w := &capture{ResponseWriter: test.ResponseWriter{TCP: tcp}}
		Fastpack{Next: p}.ServeDNS(context.Background(), request.NewScrubWriter(r, w), r)
		if p.replays != tcp {
			t.Errorf("tcp %v: replays %v", tcp, p.replays)
		}
		if want := []bool{tcp, false}; !slices.Equal(p.wrote, want) {
			t.Errorf("tcp %v: wrote the stream's answer and UDP's: %v, want %v", tcp, p.wrote, want)
		}
	}
}

// TestWriteMsgLenIsLenAsGiven: WriteMsgLen returns what m.Len() said of
// the message before it was written, however SizeAndDo changes it: no
// OPT record in the request; one the writer adds; m's own, kept; m's own
// with another owner, renamed to the root; a message truncated to the
// client's size; one asking for compression; one the encoder refuses
// (TSIG, through miekg/dns). WriteMsgKeepLen counts as WriteMsgLen.
func TestWriteMsgLenIsLenAsGiven(t *testing.T) {
	type tc struct {
		name string
		req  func(r *dns.Msg)
		msg  func(m *dns.Msg)
	}
	edns := func(r *dns.Msg) { r.SetEdns0(1232, true) }
	cases := []tc{
		{"no OPT asked", func(*dns.Msg) {}, func(*dns.Msg) {}},
		{"OPT added", edns, func(*dns.Msg) {}},
		{"OPT of its own", edns, func(m *dns.Msg) { m.SetEdns0(4096, false) }},
		{"OPT of its own, another owner", edns, func(m *dns.Msg) { m.SetEdns0(4096, false); m.Extra[0].Header().Name = "example.org." }},
		{"truncated", func(*dns.Msg) {}, func(m *dns.Msg) { m.Answer = txtSet(40) }},
		{"truncated, OPT added", func(r *dns.Msg) { r.SetEdns0(512, false) }, func(m *dns.Msg) { m.Answer = txtSet(40) }},
		{"compressed", edns, func(m *dns.Msg) { m.Compress = true }},
		{"TSIG", func(*dns.Msg) {}, func(m *dns.Msg) { m.SetTsig("key.", dns.HmacSHA256, 300, 0) }},
	}
	for _, c := range cases {
		for _, keep := range []bool{false, true} {
			r := new(dns.Msg)
			r.SetQuestion("www.example.org.", dns.TypeTXT)
			c.req(r)
			m := new(dns.Msg)
			m.SetReply(r)
			m.Answer = txtSet(2)
			c.msg(m)
			want := m.Len()
			w := &Writer{ResponseWriter: &capture{}, req: r, replays: true}
			var got int
			var err error
			if keep {
				got, err = w.WriteMsgKeepLen(r, m, new(replay.Answer))
			} else {
				got, err = w.WriteMsgLen(m)
			}
			if err != nil && c.name != "TSIG" { // no key to sign with: miekg/dns's error
				t.Fatalf("%s: %v", c.name, err)
			}
			if got != want {
				t.Errorf("%s (keep %v): %d, want Msg.Len %d as given", c.name, keep, got, want)
			}
		}
	}
}
