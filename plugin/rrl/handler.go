package rrl

import (
	"context"
	"net"
	"net/netip"
	"strings"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/rrl"
)

// RRL limits the UDP responses of the plugins after it. TCP responses are
// never limited: a TCP client's address cannot be spoofed.
type RRL struct {
	Next plugin.Handler
	l    *rrl.Limiter
}

// Name implements plugin.Handler.
func (h *RRL) Name() string { return pluginName }

// ServeDNS implements plugin.Handler.
func (h *RRL) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	ua, udp := w.RemoteAddr().(*net.UDPAddr)
	if !udp {
		return plugin.NextOrFailure(pluginName, h.Next, ctx, w, r)
	}
	addr, ok := netip.AddrFromSlice(ua.IP)
	if !ok || h.l.Exempt(addr) {
		return plugin.NextOrFailure(pluginName, h.Next, ctx, w, r)
	}
	hop, _ := codel.FromContext(ctx)
	rw := &writer{ResponseWriter: w, h: h, addr: addr.Unmap(), hop: hop, server: metrics.WithServer(ctx)}
	return plugin.NextOrFailure(pluginName, h.Next, ctx, rw, r)
}

// writer decides on each response as it is written.
type writer struct {
	dns.ResponseWriter
	h      *RRL
	addr   netip.Addr
	hop    codel.Hop
	server string
}

func (w *writer) WriteMsg(m *dns.Msg) error {
	kind, name, qtype := classify(m)
	switch w.h.l.Decide(w.addr, kind, name, qtype) {
	case rrl.Slip:
		limited.WithLabelValues(w.server, "slip").Inc()
		return w.ResponseWriter.WriteMsg(truncated(m))
	case rrl.Drop:
		limited.WithLabelValues(w.server, "drop").Inc()
		w.hop.Dropped(codel.RateLimited)
		return nil
	}
	return w.ResponseWriter.WriteMsg(m)
}

// Write decides on a response a plugin wrote packed (rare): it is read
// back to be classified; what does not unpack is sent as it is.
func (w *writer) Write(b []byte) (int, error) {
	m := new(dns.Msg)
	if m.Unpack(b) != nil {
		return w.ResponseWriter.Write(b)
	}
	kind, name, qtype := classify(m)
	switch w.h.l.Decide(w.addr, kind, name, qtype) {
	case rrl.Slip:
		limited.WithLabelValues(w.server, "slip").Inc()
		t, err := truncated(m).Pack()
		if err != nil {
			return 0, err
		}
		return w.ResponseWriter.Write(t)
	case rrl.Drop:
		limited.WithLabelValues(w.server, "drop").Inc()
		w.hop.Dropped(codel.RateLimited)
		return len(b), nil
	}
	return w.ResponseWriter.Write(b)
}

// classify returns the kind of answer m is and the name (and type) its
// bucket is keyed by: the question for a positive answer, the zone (the
// SOA's or the delegation's owner) for NXDOMAIN, NODATA and referrals, so
// that random names under one zone share a bucket.
func classify(m *dns.Msg) (rrl.Kind, string, uint16) {
	var qname string
	var qtype uint16
	if len(m.Question) > 0 {
		qname, qtype = strings.ToLower(m.Question[0].Name), m.Question[0].Qtype
	}
	zone := func(t uint16) string {
		for _, rr := range m.Ns {
			if rr.Header().Rrtype == t {
				return strings.ToLower(rr.Header().Name)
			}
		}
		return ""
	}
	switch {
	case m.Rcode == dns.RcodeNameError:
		if z := zone(dns.TypeSOA); z != "" {
			return rrl.NXDomain, z, 0
		}
		return rrl.NXDomain, qname, 0
	case m.Rcode != dns.RcodeSuccess:
		return rrl.Error, "", 0
	case len(m.Answer) > 0:
		return rrl.Answer, qname, qtype
	}
	if z := zone(dns.TypeSOA); z != "" {
		return rrl.NoData, z, 0
	}
	if z := zone(dns.TypeNS); z != "" {
		return rrl.Referral, z, 0
	}
	return rrl.NoData, qname, 0
}

// truncated is m with TC set and no records but its OPT: a client that
// is real asks again over TCP.
func truncated(m *dns.Msg) *dns.Msg {
	t := &dns.Msg{MsgHdr: m.MsgHdr, Question: m.Question}
	t.Truncated = true
	if opt := m.IsEdns0(); opt != nil {
		t.Extra = []dns.RR{opt}
	}
	return t
}
