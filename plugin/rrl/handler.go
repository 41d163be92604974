package rrl

import (
	"context"
	"encoding/hex"
	"net"
	"net/netip"
	"strings"
	"sync"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/chain"
	"github.com/ontimedns/ontime/replay"
	"github.com/ontimedns/ontime/rrl"
)

// RRL limits the UDP responses of the plugins after it, and answers DNS
// Cookies (RFC 7873): every response to a query with a cookie carries a
// fresh server cookie, and a query that returns a valid one is never
// limited. TCP responses are never limited: a TCP client's address cannot
// be spoofed.
type RRL struct {
	Next    plugin.Handler
	l       *rrl.Limiter
	cookies *rrl.Cookies
}

// Name implements plugin.Handler.
func (h *RRL) Name() string { return pluginName }

// ServeDNS implements plugin.Handler.
func (h *RRL) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	addr, udp := clientOf(w)
	client, server, ok := cookieOf(r)
	if !ok {
		// A COOKIE option of a length no cookie has (RFC 7873 section 5.2.2).
		m := new(dns.Msg)
		m.SetRcode(r, dns.RcodeFormatError)
		w.WriteMsg(m)
		return dns.RcodeFormatError, nil
	}
	limit := udp && addr.IsValid() && !h.l.Exempt(addr)
	if client == nil && !limit && !udp {
		return chain.Next(pluginName, h.Next, ctx, w, r)
	}
	// A UDP query not limited (an exempt client's) goes through the
	// writer too: an answer kept for it (replay) is kept with its subject,
	// for a client that is limited.
	verified := client != nil && server != nil && h.cookies.Valid(client, server, addr)
	hop, _ := codel.FromContext(ctx)
	rw := writers.Get().(*writer)
	*rw = writer{ResponseWriter: w, h: h, addr: addr, hop: hop, server: metrics.WithServer(ctx),
		client: client, limit: limit && !verified}
	hop.Life.AtEnd(rw) // false: the query's alone, never put back (the garbage collector frees it)
	return chain.Next(pluginName, h.Next, ctx, rw, r)
}

// clientOf returns the address w answers, and whether over UDP.
func clientOf(w dns.ResponseWriter) (addr netip.Addr, udp bool) {
	switch a := w.RemoteAddr().(type) {
	case *net.UDPAddr:
		return a.AddrPort().Addr().Unmap(), true
	case *net.TCPAddr:
		return a.AddrPort().Addr().Unmap(), false
	}
	return netip.Addr{}, false
}

// writers keeps the writers of queries that ended: with codel's Life, a
// query takes one rather than allocating it.
var writers = sync.Pool{New: func() any { return new(writer) }}

// End implements codel.Ender: the query ended, and nothing holds its
// writer any more.
func (w *writer) End() {
	*w = writer{}
	writers.Put(w)
}

// cookieOf returns the client cookie and the server cookie (nil if none)
// of r's COOKIE option, or false if the option has no cookie's length.
func cookieOf(r *dns.Msg) (client, server []byte, ok bool) {
	opt := r.IsEdns0()
	if opt == nil {
		return nil, nil, true
	}
	for _, o := range opt.Option {
		c, isCookie := o.(*dns.EDNS0_COOKIE)
		if !isCookie {
			continue
		}
		raw, err := hex.DecodeString(c.Cookie)
		if err != nil || !rrl.WellFormed(len(raw)) {
			return nil, nil, false
		}
		if len(raw) > rrl.ClientCookieLen {
			server = raw[rrl.ClientCookieLen:]
		}
		return raw[:rrl.ClientCookieLen], server, true
	}
	return nil, nil, true
}

// writer decides on each response as it is written, and gives it the
// client's cookie.
type writer struct {
	dns.ResponseWriter
	h      *RRL
	addr   netip.Addr
	hop    codel.Hop
	server string
	client []byte // the query's client cookie, nil if none
	limit  bool   // UDP, not exempt, no valid server cookie
}

func (w *writer) WriteMsg(m *dns.Msg) error {
	m, send := w.decide(m)
	if !send {
		return nil
	}
	return w.ResponseWriter.WriteMsg(m)
}

// Write decides on a response a plugin wrote packed (rare): it is read
// back to be classified; what does not unpack is sent as it is.
func (w *writer) Write(b []byte) (int, error) {
	if !w.limit && w.client == nil {
		return w.ResponseWriter.Write(b) // nothing to decide (an exempt client's)
	}
	m := new(dns.Msg)
	if m.Unpack(b) != nil {
		return w.ResponseWriter.Write(b)
	}
	m, send := w.decide(m)
	if !send {
		return len(b), nil
	}
	out, err := m.Pack()
	if err != nil {
		return 0, err
	}
	return w.ResponseWriter.Write(out)
}

// decide returns what to send for m, and whether to send anything.
func (w *writer) decide(m *dns.Msg) (*dns.Msg, bool) {
	if w.limit {
		kind, name, qtype := classify(m)
		action := w.h.l.Decide(w.addr, kind, name, qtype)
		if action != rrl.Send && w.client != nil {
			// A client that sent a cookie can prove its address:
			// BADCOOKIE, with a server cookie to ask again with
			// (RFC 7873 section 5.2.3). No larger than the query.
			limited.WithLabelValues(w.server, "badcookie").Inc()
			b := &dns.Msg{MsgHdr: m.MsgHdr, Question: m.Question}
			b.Rcode = dns.RcodeBadCookie
			return w.withCookie(b), true
		}
		if action != rrl.Send {
			return w.limited(action, m)
		}
	}
	if w.client != nil {
		m = w.withCookie(m)
	}
	return m, true
}

// limited counts a response the limiter did not let through and returns
// what goes in its place: m truncated (slip), or nothing (drop).
func (w *writer) limited(action rrl.Action, m *dns.Msg) (*dns.Msg, bool) {
	if action == rrl.Slip {
		limited.WithLabelValues(w.server, "slip").Inc()
		return truncated(m), true
	}
	limited.WithLabelValues(w.server, "drop").Inc()
	w.hop.Dropped(codel.RateLimited)
	return nil, false
}

// Replays implements replay.Writer: where the writer below replays, and
// the query has no cookie to answer (a request with an EDNS option is
// never replayed; without one, no such query reaches here).
func (w *writer) Replays() bool {
	rw, ok := chain.ReplayWriter(w.ResponseWriter)
	return ok && w.client == nil && rw.Replays()
}

// WriteMsgKeep implements replay.Writer: it decides on m as WriteMsg
// does, and keeps with an answer sent whole the subject the limiter keys
// it by, so that WritePacked counts the answer written again as this one
// was counted. An answer slipped or dropped is not kept.
func (w *writer) WriteMsgKeep(r, m *dns.Msg, keep *replay.Answer) error {
	rw, ok := chain.ReplayWriter(w.ResponseWriter)
	if !ok || w.client != nil {
		return w.WriteMsg(m)
	}
	subject := w.h.l.Subject(classify(m)) // kept where the query was not limited too: the answer may be written again to a client that is
	if w.limit {
		if action := w.h.l.DecideSubject(w.addr, subject); action != rrl.Send {
			if t, send := w.limited(action, m); send {
				return w.ResponseWriter.WriteMsg(t)
			}
			return nil
		}
	}
	keep.Subject = subject
	return rw.WriteMsgKeep(r, m, keep)
}

// WritePacked implements replay.Writer: it decides on a kept answer by
// the subject kept with it, as WriteMsg decided on the first. A slipped
// answer is the kept one unpacked and truncated, as WriteMsg would have
// sent it.
func (w *writer) WritePacked(r *dns.Msg, a *replay.Answer) (bool, error) {
	rw, ok := chain.ReplayWriter(w.ResponseWriter)
	if !ok || w.client != nil {
		return false, nil
	}
	if w.limit {
		if a.Subject == 0 {
			return false, nil // kept by a writer stack without this one: answered, and kept again, as always
		}
		if action := w.h.l.DecideSubject(w.addr, a.Subject); action != rrl.Send {
			m := new(dns.Msg)
			if err := m.Unpack(a.Wire); err != nil {
				return true, err // packed by fastpack for this very question: not reached
			}
			m.Id = r.Id
			if t, send := w.limited(action, m); send {
				return true, w.ResponseWriter.WriteMsg(t)
			}
			return true, nil
		}
	}
	return rw.WritePacked(r, a)
}

// withCookie returns a copy of m whose OPT record carries the client's
// cookie and a fresh server cookie; m and its records are left alone.
func (w *writer) withCookie(m *dns.Msg) *dns.Msg {
	cookie := w.h.freshCookie(w.client, w.addr)
	c := *m
	c.Extra = make([]dns.RR, 0, len(m.Extra)+1)
	var opt *dns.OPT
	for _, rr := range m.Extra {
		if o, ok := rr.(*dns.OPT); ok && opt == nil {
			cp := *o
			cp.Option = nil
			for _, e := range o.Option {
				if e.Option() != dns.EDNS0COOKIE {
					cp.Option = append(cp.Option, e)
				}
			}
			opt = &cp
			rr = opt
		}
		c.Extra = append(c.Extra, rr)
	}
	if opt == nil {
		opt = &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
		opt.SetUDPSize(dns.MinMsgSize) // the server sets the size and DO from the query
		c.Extra = append(c.Extra, opt)
	}
	opt.Option = append(opt.Option, cookie)
	return &c
}

// freshCookie is the COOKIE option of an answer to client at addr: its
// client cookie and a server cookie made now.
func (h *RRL) freshCookie(client []byte, addr netip.Addr) *dns.EDNS0_COOKIE {
	s := h.cookies.Make(client, addr)
	return &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: hex.EncodeToString(client) + hex.EncodeToString(s[:])}
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
