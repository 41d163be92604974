package zonestore

import (
	"context"
	"encoding/binary"
	"sync"
	"sync/atomic"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/fall"
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/alias"
	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/ahead"
	"github.com/ontimedns/ontime/internal/chain"
	"github.com/ontimedns/ontime/replay"
	"github.com/ontimedns/ontime/zonestore"
)

// Handler answers queries for the zones of its server block from a zonestore.Store.
type Handler struct {
	Next    plugin.Handler
	Fall    fall.F
	store   *zonestore.Store
	origins []string     // the file sources' zones
	sources []*source    // zone files
	dirs    []*directory // directories of zone files
	catalog *producer    // the catalog zone of the files' and directories' zones (generate_catalog), if any

	secs secondaries // secondary and catalog zones, by origin
	cats catalogs    // what each catalog zone named last

	history *history                          // recent versions, for IXFR out
	xfer    atomic.Pointer[transfer.Transfer] // the transfer plugin, to send NOTIFY
	spans   spanNotes                         // signed versions' spans, for the hourly watch

	replays *replays // answers kept packed, and a Cache a P to find them; nil: none (replay 0)
}

// Warm implements ahead.Warmer: a query codel will serve soon has its
// answer fetched, where one is kept packed for its question, then the
// zone it is checked against (the zone's version); its lookup's path
// otherwise; a step a call (replay.Shared.Warm, then Store.WarmZone or
// Store.Warm). Among 100,000 zones the zone of a kept answer, found
// cold, cost the chain with replay 3% of its queries a second once the
// store's origins were a table the lookup's warming fetches (bench/README.md).
func (h *Handler) Warm(note *ahead.Note, question []byte) {
	if note.Step >= zoneSteps {
		h.warmZone(note, question)
		return
	}
	if h.replays == nil || note.Step > 0 && note.Step < replaySteps {
		h.store.Warm(note, question)
		return
	}
	if note.Step == 0 {
		c := h.replays.get()
		thin := c.Thin() // few answers found lately: the lookup's path
		h.replays.put(c)
		if thin {
			h.store.Warm(note, question)
			return
		}
		var room [zonestore.KeyRoom]byte
		k, ok := zonestore.QuestionKey(&room, question)
		if !ok {
			note.Step = ahead.Done
			return
		}
		note.W = replay.Hash(k, binary.BigEndian.Uint16(question[len(question)-4:]))
		note.Step = replaySteps
	}
	// The steps read only what every P's Cache shares.
	if h.replays.shared().Warm(note.Step-replaySteps, note.W) {
		note.Step++
		return
	}
	kept := note.Step != replaySteps+1
	*note = ahead.Note{DO: note.DO}
	if !kept { // the lookup's path
		h.store.Warm(note, question)
		return
	}
	h.warmZone(note, question) // the answer fetched: its zone
}

// warmZone takes Store.WarmZone's steps, numbered from zoneSteps.
func (h *Handler) warmZone(note *ahead.Note, question []byte) {
	note.Step = max(note.Step-zoneSteps, 0)
	h.store.WarmZone(note, question)
	if note.Step != ahead.Done {
		note.Step += zoneSteps
	}
}

// replaySteps and zoneSteps number the steps of Warm that fetch a kept
// answer, and then its zone, apart from the store's (Store.Warm counts
// from 0).
const (
	replaySteps = 1 << 20
	zoneSteps   = 2 << 20
)

// Ready implements the ready plugin's readiness: every zone file has been
// loaded once (a missing one is retried), every directory scanned once,
// every secondary zone transferred once, or refused by every primary
// (secondary's refused.go).
func (h *Handler) Ready() bool {
	for _, s := range h.sources {
		if h.store.Get(s.origin) == nil {
			return false
		}
	}
	for _, d := range h.dirs {
		if !d.scanned.Load() {
			return false
		}
	}
	for _, m := range h.secs.load() {
		if !m.zone.Loaded() && !m.zone.Refused() {
			return false
		}
	}
	return true
}

// ServeDNS implements plugin.Handler.
func (h *Handler) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if len(r.Question) != 1 {
		return h.reply(w, r, dns.RcodeFormatError)
	}
	q := r.Question[0]
	if r.Opcode == dns.OpcodeNotify {
		if m := h.secs.get(dns.CanonicalName(q.Name)); m != nil {
			return h.notify(ctx, w, r, m)
		}
	}
	// The name's key is made on the stack first: a query answered from
	// the octets kept for it (below) needs no answer of its own.
	var z *zonestore.Zone
	var room [keyRoom]byte
	probe, err := zonestore.NewNameIn(q.Name, room[:])
	if err == nil {
		z = h.store.FindName(probe)
	}
	if z == nil && h.secs.load() != nil && h.pendingSecondary(q.Name) != nil {
		return h.reply(w, r, dns.RcodeServerFailure) // ours, not transferred yet
	}
	if z == nil {
		// Not ours (or not loaded yet): as stock file, the next plugin may know it.
		if h.Next == nil {
			if r.Opcode == dns.OpcodeNotify {
				// NOTAUTH, as Knot DNS and BIND answer a NOTIFY for a
				// zone they do not serve: a catalog's member not read
				// yet, say, whose primary notifies it as it starts.
				return h.reply(w, r, dns.RcodeNotAuth)
			}
			return h.reply(w, r, dns.RcodeRefused)
		}
		return chain.Next(h.Name(), h.Next, ctx, w, r)
	}
	if r.Opcode == dns.OpcodeNotify {
		// A zone of ours that no primary feeds: NOTAUTH, as Knot DNS
		// answers a NOTIFY for a zone it is not a secondary of (RFC 1996
		// names no rcode for it).
		return h.reply(w, r, dns.RcodeNotAuth)
	}
	if r.Opcode != dns.OpcodeQuery {
		return h.reply(w, r, dns.RcodeNotImplemented)
	}
	switch {
	case q.Qclass != dns.ClassINET && q.Qclass != dns.ClassANY:
		return h.reply(w, r, dns.RcodeRefused) // the zone is class IN, as Knot answers
	case q.Qtype == dns.TypeAXFR || q.Qtype == dns.TypeIXFR:
		return h.reply(w, r, dns.RcodeRefused) // transfers are the transfer plugin's, before this one
	case q.Qtype == dns.TypeNone:
		return h.reply(w, r, dns.RcodeNotImplemented) // type 0 is reserved (RFC 6895 section 3.1); as Knot answers
	}

	if z.Expired() {
		return h.reply(w, r, dns.RcodeServerFailure)
	}

	// The same question asked the same way, from the same version of the
	// zone, has the same answer: written as it was packed, where every
	// writer down to the packer can (replay.Writer).
	var keep *replay.Cache
	hop, _ := codel.FromContext(ctx)
	pw, replayable := chain.ReplayWriter(w)
	if replayable && h.replays != nil && pw.Replays() {
		c := h.replays.get()
		defer h.replays.put(c)
		if c.Probe() {
			// fastpack replays a query codel's reader read (UDP), and one
			// no reader read only where it came over a stream (TCP): its
			// answer is packed to 65,535 octets, and kept apart.
			stream := hop.Life == nil
			if ans := c.Find(r, stream, replay.Hash(probe.Key(), q.Qtype), z.Generation()); ans != nil {
				replay.SetID(ans.Wire, r.Id)
				if done, _ := pw.WritePacked(r, ans); done {
					return dns.RcodeSuccess, nil
				}
			}
			if c.Keeping() {
				keep = c
			}
		}
	}

	// The answer's name in the answer's own room: the message and the
	// plugins above read what the lookup makes of it after this returns.
	a := newAnswer(hop)
	name := zonestore.NewNameKeyed(q.Name, probe.Key(), a.key[:])
	opt := r.IsEdns0()
	do := opt != nil && opt.Do()
	res := &a.res
	z.AnswerWarmed(res, name, q.Qtype, do, hop.Note)

	if res.Rcode == dns.RcodeNameError && len(res.Answer) == 0 && h.Fall.Through(q.Name) {
		return chain.Next(h.Name(), h.Next, ctx, w, r)
	}

	if res.Alias != nil {
		// The alias plugin, when it comes just before this one, resolves it.
		if rep, ok := w.(alias.Reporter); ok {
			rep.Report(alias.Found{Alias: res.Alias, SOA: res.SOA, Signed: z.Signed()})
		}
	}
	m := &a.m
	m.SetReply(&dns.Msg{MsgHdr: r.MsgHdr}) // its question would be allocated apart: it is a's
	m.CheckingDisabled = false             // RFC 4035 section 3.1.6 (reply)
	a.q[0] = q
	m.Question = a.q[:]
	m.Authoritative = res.Authoritative
	m.Rcode = res.Rcode
	m.Answer, m.Ns, m.Extra = res.Answer, res.Ns, res.Extra
	if opt != nil && zonestore.AsksExpire(opt) {
		m.Extra = withExpire(m.Extra, z)
	}
	// An ALIAS is resolved each time by the alias plugin, whose writer
	// keeps no answer it reported (WriteMsgKeep leaves kept as it was).
	if keep == nil {
		w.WriteMsg(m)
		return dns.RcodeSuccess, nil
	}
	kept := replay.Answer{Wire: keep.Room(), AnyCase: !res.QuestionInData}
	if pw.WriteMsgKeep(r, m, &kept) == nil {
		keep.Keep(z.Generation(), kept)
	}
	return dns.RcodeSuccess, nil
}

// answer is a query's answer, the message that carries it and what the
// lookup needed, in one allocation: all live as long as the writers below
// keep the message, and the plugins above that recorded it (log) read it.
type answer struct {
	m   dns.Msg
	q   [1]dns.Question
	res zonestore.Response
	// key is room for the question's lookup key: appendKey writes up to
	// nine octets past a name's length (the length octet and a word's
	// spill), so this holds the key of any name of up to 119 octets. 32,
	// before, missed every name of 24 octets or more (the load test's
	// hosts), and each then allocated its key.
	key [keyRoom]byte
}

const keyRoom = 128

// answers keeps answers of queries that ended, for the next ones.
var answers = sync.Pool{New: func() any { return new(answer) }}

// newAnswer returns an answer for the query of hop: one kept from an
// earlier query where this one has a Life (codel read it), and given back
// when it ends, after every plugin above has done with the message; a
// fresh one elsewhere. Only a query that is looked up takes one: not one
// whose name is not ours, nor one written the octets kept for it.
func newAnswer(hop codel.Hop) *answer {
	if hop.Life == nil {
		return new(answer)
	}
	a := answers.Get().(*answer)
	hop.Life.AtEnd(a) // false: it is this query's alone, never put back
	return a
}

// End implements codel.Ender.
//
// Only what holds pointers is cleared: the key's room is octets, written
// before it is read (NewNameKeyed), and the response keeps its sections'
// arrays (Reuse). Clearing the whole answer, as it was, copied the
// response out and back and cleared the room as well.
func (a *answer) End() {
	a.res.Reuse() // its sections' arrays, for the next answer
	a.m = dns.Msg{}
	a.q[0] = dns.Question{}
	answers.Put(a)
}

// reply writes an empty answer with rcode. It returns success so that no
// other plugin writes a second answer.
//
// CD is cleared here and in every answer from a zone, where SetReply
// copies it: RFC 4035 section 3.1.6 has an authoritative server clear it
// (it validates nothing, CD or not), and Knot DNS does.
func (h *Handler) reply(w dns.ResponseWriter, r *dns.Msg, rcode int) (int, error) {
	m := new(dns.Msg)
	m.SetRcode(r, rcode)
	m.CheckingDisabled = false
	w.WriteMsg(m)
	return dns.RcodeSuccess, nil
}

// Name implements plugin.Handler.
func (h *Handler) Name() string { return pluginName }
