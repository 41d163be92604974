package codel

import (
	"encoding/binary"

	"github.com/coredns/coredns/core/dnsserver"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/ahead"
)

// A worker warms the queries of a hand it takes before it serves them
// (codel.Config.Warm): the server's Warmer (zonestore's handler) has the
// CPU fetch, a step a call, what each one's lookup will read, each step
// for all of them at once (internal/ahead). Only one Warmer a server:
// a query's Note is one Warmer's, and a server of several zonestore blocks
// is not warmed.

// warmerOf returns the one Warmer among the plugins of the server blocks,
// or nil. A block listed under several zones gives the same Warmer each
// time.
func warmerOf(configs []*dnsserver.Config) ahead.Warmer {
	var found ahead.Warmer
	for _, c := range configs {
		for _, h := range c.Handlers() {
			if w, ok := h.(ahead.Warmer); ok {
				if found != nil && found != w {
					return nil
				}
				found = w
			}
		}
	}
	return found
}

// warmTask is the queue's Warm: a packet read here is warmed by its
// server's Warmer.
func warmTask(t codel.Task) (more bool) {
	if p, ok := t.(*packet); ok {
		return p.warm()
	}
	return false
}

// warm takes the warming of p's query a step further, and reports
// whether there is more.
func (p *packet) warm() (more bool) {
	if rt := p.ctx.route; rt != nil && rt.warmer != nil {
		return warmQuery(rt.warmer, &p.note, &p.qend, (*p.buf)[:p.n])
	}
	return false
}

// warmQuery takes the warming of the query m a step further with w, and
// reports whether there is more: note is the query's, and qend where its
// question ends (0 until read, then kept: questionEnd).
func warmQuery(w ahead.Warmer, note *ahead.Note, qend *int, m []byte) (more bool) {
	if note.Step == ahead.Done {
		return false
	}
	if *qend == 0 {
		*qend = questionEnd(m)
		if *qend > 0 {
			note.DO = asksDO(m, *qend)
		}
	}
	if *qend <= 0 {
		return false
	}
	w.Warm(note, m[headerLen:*qend])
	return note.Step != ahead.Done
}

const headerLen = 12

// asksDO says whether the query m, whose one question ends at qend, asks
// for DNSSEC: no answer or authority records, and its first additional
// record an OPT record of the root (as a query's is) with the DO bit set.
// A query it misreads is warmed as one that does not ask, and answered
// as it asks.
func asksDO(m []byte, qend int) bool {
	if len(m) < headerLen || binary.BigEndian.Uint32(m[6:]) != 0 || binary.BigEndian.Uint16(m[10:]) == 0 {
		return false
	}
	opt := m[qend:]
	return rootOPT(opt) && opt[7]&0x80 != 0
}

// questionEnd is where m's one question ends (its name whole and
// uncompressed, as a query's is: there is nothing before it to point to),
// or -1 where m has not one such question.
func questionEnd(m []byte) int {
	if len(m) <= headerLen || binary.BigEndian.Uint16(m[4:]) != 1 {
		return -1
	}
	i := headerLen
	for i < len(m) && m[i] != 0 {
		if m[i] > 63 {
			return -1
		}
		i += 1 + int(m[i])
	}
	if end := i + 1 + 4; end <= len(m) && end-headerLen <= 255+4 {
		return end
	}
	return -1
}
