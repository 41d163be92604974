package alias

import (
	"context"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/alias"
	"github.com/ontimedns/ontime/alias/record"
	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/chain"
	"github.com/ontimedns/ontime/replay"
)

// Alias answers A and AAAA questions at names with an ALIAS record. It
// sits just before zonestore, which reports the ALIAS it met (through the
// writer) and answers as the zone is; this plugin holds that answer,
// resolves the target, and writes the answer it becomes.
type Alias struct {
	Next plugin.Handler

	cfg      alias.Config
	res      *alias.Resolver
	onWorker bool // wait for lookups on the worker (to measure what not waiting saves)
	signer   bool // the dnssec plugin signs this server block's answers
	server   string

	unsigned atomic.Uint64 // synthesized answers sent unsigned in a signed zone
	warned   sync.Map      // owners logged once as answered unsigned
}

// ServeDNS implements plugin.Handler.
func (a *Alias) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if len(r.Question) != 1 || (r.Question[0].Qtype != dns.TypeA && r.Question[0].Qtype != dns.TypeAAAA) {
		return chain.Next(pluginName, a.Next, ctx, w, r)
	}
	if a.Next == nil {
		return chain.Next(pluginName, a.Next, ctx, w, r)
	}
	hw := holders.Get().(*holdWriter)
	hw.ResponseWriter = w
	// Called directly: plugin.NextOrFailure would wrap hw in a writer of
	// its own, and zonestore would not find it.
	rcode, err := a.Next.ServeDNS(ctx, hw, r)
	found, held := hw.found, hw.held
	*hw = holdWriter{}
	holders.Put(hw)
	if held == nil {
		return rcode, err // no ALIAS: the answer went through as it was
	}

	q := &query{a: a, w: w, r: r, m: held, found: found}
	k := alias.NewKey(record.Target(found.Alias), r.Question[0].Qtype)
	hop, queued := codel.FromContext(ctx)
	if queued && hop.Queue != nil && !a.onWorker {
		// Served by a codel worker: the worker moves on, and the query
		// comes back to its queue when the lookup ends.
		if res, ok := a.res.Resolve(k, hop, q); ok {
			q.Answer(res)
		}
		return dns.RcodeSuccess, nil
	}
	// In place: a TCP connection's own goroutine, a server without codel,
	// or on_worker. Nobody waits behind it (but with on_worker).
	arrival := codel.Now()
	if queued {
		arrival = hop.Arrival
	}
	res := a.res.Wait(k, arrival)
	if queued && a.res.Late(arrival) {
		return dns.RcodeSuccess, nil // dropped, and counted, as codel drops: nobody answers
	}
	q.Answer(res)
	return dns.RcodeSuccess, nil
}

// Name implements plugin.Handler.
func (a *Alias) Name() string { return pluginName }

// holdWriter is the writer zonestore answers through: it passes the
// answer on, unless zonestore reported an ALIAS first, then it keeps it.
type holdWriter struct {
	dns.ResponseWriter
	found alias.Found
	held  *dns.Msg
}

// holders keeps a ServeDNS of an A or AAAA question from allocating a
// writer: nothing keeps one after the chain returns.
var holders = sync.Pool{New: func() any { return new(holdWriter) }}

func (h *holdWriter) Report(f alias.Found) { h.found = f }

func (h *holdWriter) WriteMsg(m *dns.Msg) error {
	if h.found.Alias == nil {
		return h.ResponseWriter.WriteMsg(m)
	}
	h.held = m
	return nil
}

// Replays implements replay.Writer, where the writer below is one: an
// answer is kept only where no ALIAS was reported for it (WriteMsgKeep),
// so a kept answer is never an ALIAS's and goes through as it is. Until
// 2026-12-05 the writer was no replay.Writer, and a chain with alias (the
// Kubernetes example's) kept no answer to an A or AAAA question at all.
func (h *holdWriter) Replays() bool {
	rw, ok := chain.ReplayWriter(h.ResponseWriter)
	return ok && rw.Replays()
}

// WriteMsgKeep implements replay.Writer: an answer with an ALIAS reported
// is held, as WriteMsg holds it, and not kept (keep is left as it was):
// it is resolved again for each query.
func (h *holdWriter) WriteMsgKeep(r, m *dns.Msg, keep *replay.Answer) error {
	rw, ok := chain.ReplayWriter(h.ResponseWriter)
	if !ok || h.found.Alias != nil {
		return h.WriteMsg(m)
	}
	return rw.WriteMsgKeep(r, m, keep)
}

// WritePacked implements replay.Writer: a kept answer, never an ALIAS's,
// goes through as it is.
func (h *holdWriter) WritePacked(r *dns.Msg, a *replay.Answer) (bool, error) {
	rw, ok := chain.ReplayWriter(h.ResponseWriter)
	if !ok || h.found.Alias != nil {
		return false, nil
	}
	return rw.WritePacked(r, a)
}

// query is an answer waiting for the ALIAS target's addresses.
type query struct {
	a     *Alias
	w     dns.ResponseWriter
	r     *dns.Msg
	m     *dns.Msg // the zone's answer
	found alias.Found
}

// Answer turns the zone's answer into the ALIAS answer and writes it:
//   - the target's addresses: they replace the name's own, under the
//     owner's name, each TTL the smaller of the ALIAS's and upstream's;
//   - NODATA (the target has none, or does not exist): NODATA with the SOA;
//   - failure (upstreams, or the pool dropped the lookup): the name's own
//     addresses if the zone holds some (the ANAME draft's fallback), else
//     SERVFAIL. A stale answer (serve_stale) counts as addresses.
func (q *query) Answer(res alias.Result) {
	m, qtype := q.m, q.r.Question[0].Qtype
	owner := q.found.Alias.Header().Name
	own := 0
	for _, rr := range m.Answer {
		if isOwn(rr, owner, qtype) {
			own++
		}
	}
	switch {
	case res.Err == nil && len(res.RRs) > 0, res.Stale:
		ttl := min(q.found.Alias.Header().Ttl, res.TTL)
		m.Answer = withoutOwn(m.Answer, owner, qtype)
		for _, rr := range res.RRs {
			if s := synthesize(rr, owner, ttl); s != nil {
				m.Answer = append(m.Answer, s)
			}
		}
		m.Ns = nil // a positive answer: no SOA, no proof of absence
		if len(res.RRs) == 0 && q.found.SOA != nil {
			m.Ns = []dns.RR{q.found.SOA} // a stale NODATA
		}
		q.unsignedInSignedZone(owner)
	case res.Err == nil:
		if own > 0 {
			m.Answer = withoutOwn(m.Answer, owner, qtype)
			m.Ns = []dns.RR{q.found.SOA}
			q.unsignedInSignedZone(owner)
		}
	case own > 0:
		// The zone's own addresses stand.
	default:
		m = new(dns.Msg)
		m.SetRcode(q.r, dns.RcodeServerFailure)
		m.CheckingDisabled = false // as zonestore's answers (RFC 4035 section 3.1.6)
	}
	q.w.WriteMsg(m)
}

// Drop: the query's time ran out while it was away; codel counted it.
// Nobody answers: the resolver has asked another server by now.
func (q *query) Drop(codel.Reason) {}

// unsignedInSignedZone notes an answer that a validator cannot check: a
// synthesized RRset in a pre-signed zone, in a server block that has no
// dnssec plugin to sign it online. It is sent, logged once per owner and
// counted.
func (q *query) unsignedInSignedZone(owner string) {
	if !q.found.Signed || q.a.signer {
		return
	}
	if opt := q.r.IsEdns0(); opt == nil || !opt.Do() {
		return
	}
	q.a.unsigned.Add(1)
	if _, seen := q.a.warned.LoadOrStore(strings.ToLower(owner), true); !seen {
		log.Warningf("ALIAS at %s in a signed zone is answered unsigned: configure the dnssec plugin with the zone's key to sign it online", owner)
	}
}

// isOwn reports whether rr is one of the zone's own records that the
// target's answer replaces: the owner's records of the question's type,
// and their signatures.
func isOwn(rr dns.RR, owner string, qtype uint16) bool {
	h := rr.Header()
	if !strings.EqualFold(h.Name, owner) {
		return false
	}
	if sig, ok := rr.(*dns.RRSIG); ok {
		return sig.TypeCovered == qtype
	}
	return h.Rrtype == qtype
}

func withoutOwn(rrs []dns.RR, owner string, qtype uint16) []dns.RR {
	kept := make([]dns.RR, 0, len(rrs)) // rrs may be the zone's own slice: never filter it in place
	for _, rr := range rrs {
		if !isOwn(rr, owner, qtype) {
			kept = append(kept, rr)
		}
	}
	return kept
}

// synthesize returns the target's address rr under owner, with ttl.
func synthesize(rr dns.RR, owner string, ttl uint32) dns.RR {
	hdr := dns.RR_Header{Name: owner, Rrtype: rr.Header().Rrtype, Class: dns.ClassINET, Ttl: ttl}
	switch r := rr.(type) {
	case *dns.A:
		return &dns.A{Hdr: hdr, A: r.A}
	case *dns.AAAA:
		return &dns.AAAA{Hdr: hdr, AAAA: r.AAAA}
	}
	return nil
}
