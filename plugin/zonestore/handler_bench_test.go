package zonestore

import (
	"context"
	"net"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
	aliasplugin "github.com/ontimedns/ontime/plugin/alias"
	"github.com/ontimedns/ontime/zonestore"
)

// packWriter packs what it is given, as miekg/dns's UDP writer does before
// the system call, and keeps nothing.
type packWriter struct {
	buf []byte
}

func (w *packWriter) LocalAddr() net.Addr { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53} }
func (w *packWriter) RemoteAddr() net.Addr {
	return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
}
func (w *packWriter) WriteMsg(m *dns.Msg) error {
	b, err := m.PackBuffer(w.buf)
	w.buf = b[:0]
	return err
}
func (w *packWriter) Write(b []byte) (int, error) { return len(b), nil }
func (w *packWriter) Close() error                { return nil }
func (w *packWriter) TsigStatus() error           { return nil }
func (w *packWriter) TsigTimersOnly(bool)         {}
func (w *packWriter) Hijack()                     {}

func benchHandler(b *testing.B) (*Handler, []*dns.Msg) {
	z, err := zonestore.Parse(strings.NewReader(workload.Zone(50000)), workload.Origin, "")
	if err != nil {
		b.Fatal(err)
	}
	h := &Handler{store: zonestore.NewStore()}
	if err := h.store.Publish(nil, z, false); err != nil {
		b.Fatal(err)
	}
	var msgs []*dns.Msg
	for _, q := range workload.Queries(50000, 4096) {
		m := new(dns.Msg)
		m.SetQuestion(q.Name, dns.StringToType[q.Type])
		msgs = append(msgs, m)
	}
	return h, msgs
}

// BenchmarkServeDNS runs the handler on the load test's query mix behind
// CoreDNS's ScrubWriter, packing each answer: the user-space cost of a query
// in this plugin, without the sockets.
func BenchmarkServeDNS(b *testing.B) {
	h, msgs := benchHandler(b)
	serveLoop(b, h, msgs)
}

// serveLoop runs chain on msgs, one after another, behind ScrubWriter.
func serveLoop(b *testing.B, chain plugin.Handler, msgs []*dns.Msg) {
	w := &packWriter{}
	ctx := context.Background()
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r := msgs[i%len(msgs)]
		chain.ServeDNS(ctx, request.NewScrubWriter(r, w), r)
	}
}

// BenchmarkServeDNSGoroutine is the same on a fresh goroutine per query, as
// CoreDNS serves UDP: the difference is what growing fresh stacks costs.
func BenchmarkServeDNSGoroutine(b *testing.B) {
	h, msgs := benchHandler(b)
	ctx := context.Background()
	done := make(chan struct{})
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		r := msgs[i%len(msgs)]
		go func() {
			h.ServeDNS(ctx, request.NewScrubWriter(r, &packWriter{}), r)
			done <- struct{}{}
		}()
		<-done
	}
}

// BenchmarkServeDNSBehindAlias is BenchmarkServeDNS with the alias plugin
// in front, on a zone without ALIAS records: what alias costs the queries
// it does not answer (its writer for A and AAAA questions is pooled).
func BenchmarkServeDNSBehindAlias(b *testing.B) {
	h, msgs := benchHandler(b)
	serveLoop(b, &aliasplugin.Alias{Next: h}, msgs)
}
