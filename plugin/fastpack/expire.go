package fastpack

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// A zone transfer is packed by the stock transfer plugin (miekg/dns's
// Transfer.Out), which knows nothing of RFC 7314's EXPIRE option: a
// secondary that transfers a zone from this server, and asks how long the
// zone has left here, would get no answer and count the SOA's expire from
// each transfer, a whole expire past this server's own where the zone is
// a secondary here too. Every message of a transfer passes through this
// writer, which mirrors the request's OPT record into it: where the
// request asks for EXPIRE, the writer asks the plugin of the server block
// that answers for its zones' expiry (zonestore's Handler) and adds it to
// each message, as Knot DNS does.

// An ExpireAnswerer says what an answer from zone carries in its EXPIRE
// option, where it serves zone.
type ExpireAnswerer interface {
	ExpireFor(zone string) (uint32, bool)
}

// expirer holds the block's ExpireAnswerer, found once the chain is made
// (OnStartup, before the servers start).
type expirer struct{ answerer ExpireAnswerer }

// asked returns x where r is a transfer (AXFR or IXFR) that asks for
// EXPIRE and the block has an answerer, nil otherwise. It is read when the
// writer is made: a plugin after this one may strip the option from r
// (request.SizeAndDo keeps only the options it knows).
func (x *expirer) asked(r *dns.Msg) *expirer {
	if x == nil || x.answerer == nil || len(r.Question) != 1 {
		return nil
	}
	if t := r.Question[0].Qtype; t != dns.TypeAXFR && t != dns.TypeIXFR {
		return nil
	}
	if o := r.IsEdns0(); o == nil || !zonestore.AsksExpire(o) {
		return nil
	}
	return x
}

// find takes the first of the block's handlers that answers EXPIRE.
func (x *expirer) find(cfg *dnsserver.Config) {
	for _, h := range cfg.Handlers() {
		if a, ok := h.(ExpireAnswerer); ok {
			x.answerer = a
			return
		}
	}
}

// transferExpire returns m's Extra with the zone's EXPIRE in its OPT
// record, where the writer's request is a transfer that asked for it
// (expirer.asked) and m has none: in a copy of m's OPT record where it
// has one (the stock tsig plugin's writer adds the request's, without the
// option, before its TSIG record), else in one of its own before the TSIG
// record, if any. Else it returns m's Extra as it is.
func (w *Writer) transferExpire(m *dns.Msg) []dns.RR {
	if w.expire == nil {
		return m.Extra
	}
	o := m.IsEdns0()
	if o != nil && zonestore.AsksExpire(o) {
		return m.Extra
	}
	left, ok := w.expire.answerer.ExpireFor(w.req.Question[0].Name)
	if !ok {
		return m.Extra
	}
	opt := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
	if ro := w.req.IsEdns0(); ro != nil {
		opt.SetUDPSize(ro.UDPSize())
	}
	if o != nil {
		*opt = *o
	}
	opt.Option = append(opt.Option[:len(opt.Option):len(opt.Option)], &dns.EDNS0_EXPIRE{Code: dns.EDNS0EXPIRE, Expire: left})
	extra := make([]dns.RR, 0, len(m.Extra)+1)
	for _, rr := range m.Extra {
		if rr != o || o == nil {
			extra = append(extra, rr)
		}
	}
	// The OPT record goes before a TSIG record, which is last.
	if n := len(extra); n > 0 && extra[n-1].Header().Rrtype == dns.TypeTSIG {
		return append(append(extra[:n-1:n-1], opt), extra[n-1])
	}
	return append(extra, opt)
}
