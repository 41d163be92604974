package wire

import (
	"errors"
	"fmt"
	"strings"

	"github.com/miekg/dns"
)

// The parity harness: what we encode must unpack to what miekg/dns's Pack
// of the same message unpacks to, truncated as request.Scrub (that is,
// dns.Msg.Truncate) truncates it for the same size, and must never be
// longer.
//
// Three liberties are allowed, all "or smaller": truncation keeps whole
// RRsets where miekg/dns keeps whole records; additional data an answer
// does not need (anything but a referral's) is left out without TC, an
// RRset there that fits kept without the signatures that do not (as Knot
// DNS does, and RFC 2181 section 9 and RFC 4035 section 3.1.1 allow);
// and names compress
// case-insensitively (RFC 1035 4.1.4 names compare without case), so the
// case of a name may come from the earlier name it points to. Names are
// therefore compared without case, everything else exactly; the question,
// which is first and never points anywhere, keeps its case exactly (a
// second one, in a message no client sends, may point into the first).

// errDeclined is returned by parity when our encoder declined the message
// (it returned an error); the caller decides whether that is allowed.
var errDeclined = errors.New("declined")

// parity encodes m with e at size and checks it against miekg/dns. It
// returns our bytes.
// errBothUnreadable: neither our bytes nor miekg/dns's unpack.
var errBothUnreadable = errors.New("neither encoding unpacks")

func parity(e *Encoder, m *dns.Msg, size int) ([]byte, error) {
	limit := size
	if limit <= 0 || limit > dns.MaxMsgSize {
		limit = dns.MaxMsgSize
	}
	if limit < dns.MinMsgSize {
		limit = dns.MinMsgSize
	}
	before := m.String()
	ours, err := e.Encode(nil, m, size)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errDeclined, err)
	}
	if m.String() != before {
		return nil, fmt.Errorf("Encode modified the message")
	}
	if err := countedAsMsgLen(e, m, ours); err != nil {
		return nil, err
	}
	// Over the limit only where the header and questions (and the OPT
	// record) alone are, as miekg/dns's Truncate leaves them: every
	// question is kept, and only records are left out (FuzzEncode found
	// 103 questions, 527 octets); and then no longer than they are.
	if len(ours) > limit {
		if least := leastPacked(m); len(least) <= limit || len(ours) > len(least) {
			return nil, fmt.Errorf("%d octets, over the limit of %d", len(ours), limit)
		}
	}
	var got dns.Msg
	if err := got.Unpack(ours); err != nil {
		// A record that came out of Unpack half read (rdata shorter than
		// its type's fields) packs, by miekg/dns too, into bytes that do
		// not unpack: no worse than the reference, then.
		ref := m.Copy()
		optLast(ref)
		var theirs dns.Msg
		if b, perr := ref.Pack(); perr == nil && theirs.Unpack(b) != nil {
			return nil, errBothUnreadable
		}
		return nil, fmt.Errorf("our bytes do not unpack: %v\n% x", err, ours)
	}

	// The references: the whole message, and the message as Scrub leaves it.
	whole := m.Copy()
	optLast(whole)
	whole.Compress = true
	wholeBytes, err := whole.Pack()
	if err != nil {
		return nil, fmt.Errorf("miekg/dns cannot pack what we packed: %v", err)
	}
	var full dns.Msg
	if err := full.Unpack(wholeBytes); err != nil {
		return nil, fmt.Errorf("miekg/dns's bytes do not unpack: %v", err)
	}
	scrubbed := m.Copy()
	optLast(scrubbed)
	scrubbed.Truncate(limit)
	scrubbed.Compress = true
	scrubBytes, err := scrubbed.Pack()
	if err != nil {
		return nil, fmt.Errorf("miekg/dns cannot pack its truncated message: %v", err)
	}
	miekgDropped := records(scrubbed) < records(whole)

	if err := sameHeader(&got, &full); err != nil {
		return ours, err
	}
	g, f := flat(&got), flat(&full)
	if len(g) == len(f) {
		if got.Truncated != m.Truncated {
			return ours, fmt.Errorf("TC %v on a message kept whole (TC was %v)", got.Truncated, m.Truncated)
		}
		for i := range g {
			if err := sameRR(g[i], f[i]); err != nil {
				return ours, err
			}
		}
		if !miekgDropped && len(ours) > len(scrubBytes) {
			return ours, fmt.Errorf("ours is %d octets, miekg/dns's %d", len(ours), len(scrubBytes))
		}
	} else {
		if !miekgDropped {
			return ours, fmt.Errorf("we dropped records (%d of %d kept) where miekg/dns kept them all", len(g), len(f))
		}
		if len(g) > len(f) {
			return ours, fmt.Errorf("more records than the message holds")
		}
		// Only additional data the answer does not need may go without TC.
		optional := !referral(m) && len(got.Answer) == len(full.Answer) && len(got.Ns) == len(full.Ns)
		if !got.Truncated && !optional {
			return ours, fmt.Errorf("records dropped without TC")
		}
		if got.Truncated && optional && len(got.Extra) < len(full.Extra) {
			return ours, fmt.Errorf("TC set for additional data the answer does not need")
		}
		for i := range g {
			if err := sameRR(g[i], f[i]); err != nil {
				return ours, fmt.Errorf("truncated message is not a prefix: %v", err)
			}
		}
		next := f[len(g)]
		if len(g) > 0 && sameSet(g[len(g)-1].rr.Header(), next.rr.Header(), next.rr, false) && g[len(g)-1].sec == next.sec &&
			!(optional && next.sec == 2 && next.rr.Header().Rrtype == dns.TypeRRSIG) {
			return ours, fmt.Errorf("truncation split an RRset after %s", g[len(g)-1].rr)
		}
	}
	if (got.IsEdns0() == nil) != (full.IsEdns0() == nil) {
		return ours, fmt.Errorf("OPT record kept: ours %v, miekg/dns %v", got.IsEdns0() != nil, full.IsEdns0() != nil)
	}
	if o, w := got.IsEdns0(), full.IsEdns0(); o != nil && o.String() != w.String() {
		return ours, fmt.Errorf("OPT: ours %s, miekg/dns %s", o, w)
	}
	return ours, nil
}

// countedAsMsgLen checks e.Len, the count of the message just encoded
// into ours, against Msg.Len: equal, unless m asks for compression or
// was truncated (TC), where it is not counted (-1).
func countedAsMsgLen(e *Encoder, m *dns.Msg, ours []byte) error {
	if e.Len >= 0 {
		lensCounted++
	}
	switch {
	case e.Len >= 0 && e.Len != m.Len():
		return fmt.Errorf("Len %d, Msg.Len %d", e.Len, m.Len())
	case e.Len < 0 && !m.Compress && ours[2]&0x02 == 0 && !leftOut(m, ours):
		return fmt.Errorf("Len not counted for a message neither compressed nor truncated")
	case e.Len >= 0 && m.Compress:
		return fmt.Errorf("Len %d counted for a message that asks for compression", e.Len)
	}
	var opt *dns.OPT
	for _, rr := range m.Extra {
		if o, ok := rr.(*dns.OPT); ok {
			opt = o
		}
	}
	if e.Len >= 0 && opt != nil && e.OPTLen != dns.Len(opt) || opt == nil && e.OPTLen != 0 {
		return fmt.Errorf("OPTLen %d, want %d", e.OPTLen, map[bool]int{true: dns.Len(opt)}[opt != nil])
	}
	return nil
}

// leftOut reports whether ours, m encoded, holds fewer records than m:
// additional data left out without TC.
func leftOut(m *dns.Msg, ours []byte) bool {
	n := 0
	for i := 6; i < 12; i += 2 {
		n += int(ours[i])<<8 | int(ours[i+1])
	}
	return n < records(m)
}

// lensCounted counts the messages countedAsMsgLen found counted, for the
// tests that say how many were.
var lensCounted int

// optLast moves the OPT record to the end of the additional section, where
// our encoder always writes it (and where Truncate puts it back).
func optLast(m *dns.Msg) {
	for i, rr := range m.Extra {
		if rr.Header().Rrtype == dns.TypeOPT {
			m.Extra = append(append(m.Extra[:i:i], m.Extra[i+1:]...), rr)
			return
		}
	}
}

// leastPacked is m as miekg/dns packs it with every record left out but
// the OPT record: the least a truncated m can take.
func leastPacked(m *dns.Msg) []byte {
	least := m.Copy()
	least.Answer, least.Ns, least.Extra = nil, nil, nil
	if opt := m.IsEdns0(); opt != nil {
		least.Extra = []dns.RR{opt}
	}
	least.Compress = true
	b, _ := least.Pack()
	return b
}

func records(m *dns.Msg) int { return len(m.Answer) + len(m.Ns) + len(m.Extra) }

func sameHeader(got, want *dns.Msg) error {
	g, w := got.MsgHdr, want.MsgHdr
	g.Truncated, w.Truncated = false, false
	if g != w {
		return fmt.Errorf("header: ours %+v, miekg/dns %+v", got.MsgHdr, want.MsgHdr)
	}
	if len(got.Question) != len(want.Question) {
		return fmt.Errorf("question count: ours %d, miekg/dns %d", len(got.Question), len(want.Question))
	}
	for i := range got.Question {
		g, w := got.Question[i], want.Question[i]
		if i > 0 { // a second question may point into the first
			g.Name, w.Name = strings.ToLower(g.Name), strings.ToLower(w.Name)
		}
		if g != w {
			return fmt.Errorf("question: ours %v, miekg/dns %v", got.Question[i], want.Question[i])
		}
	}
	return nil
}

type placed struct {
	sec int
	rr  dns.RR
}

// flat lists the records of the three sections, the OPT record left out.
func flat(m *dns.Msg) []placed {
	var out []placed
	for si, sec := range [3][]dns.RR{m.Answer, m.Ns, m.Extra} {
		for _, rr := range sec {
			if si == 2 && rr.Header().Rrtype == dns.TypeOPT {
				continue
			}
			out = append(out, placed{si, rr})
		}
	}
	return out
}

func sameRR(g, w placed) error {
	if g.sec != w.sec {
		return fmt.Errorf("%s in section %d, miekg/dns has %s in %d", g.rr, g.sec, w.rr, w.sec)
	}
	gh, wh := g.rr.Header(), w.rr.Header()
	if gh.Ttl != wh.Ttl || !dns.IsDuplicate(g.rr, w.rr) {
		if gh.Rrtype == dns.TypeOPT && gh.Ttl == wh.Ttl && g.rr.String() == w.rr.String() {
			return nil
		}
		// IsDuplicate knows nothing of private types (ALIAS, once a test
		// binary registers it): their text is their identity.
		if _, private := g.rr.(*dns.PrivateRR); private && gh.Ttl == wh.Ttl && g.rr.String() == w.rr.String() {
			return nil
		}
		return fmt.Errorf("record:\n  ours:       %s (rdlength %d)\n  miekg/dns:  %s (rdlength %d)", g.rr, gh.Rdlength, w.rr, wh.Rdlength)
	}
	return nil
}

// withReply is m as a reply to a question, as the parity corpus builds them.
func withReply(qname string, qtype uint16, answer, ns, extra []dns.RR) *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion(qname, qtype)
	m.Response, m.Authoritative = true, true
	m.Answer, m.Ns, m.Extra = answer, ns, extra
	return m
}

func mustRR(s string) dns.RR {
	rr, err := dns.NewRR(s)
	if err != nil {
		panic(fmt.Sprintf("%s: %v", s, err))
	}
	return rr
}

func rrs(lines ...string) []dns.RR {
	out := make([]dns.RR, 0, len(lines))
	for _, l := range lines {
		out = append(out, mustRR(l))
	}
	return out
}

// fiftyLabels is a name of 50 one-character labels under example.org.
func fiftyLabels(first byte) string {
	var b strings.Builder
	for i := 0; i < 50; i++ {
		b.WriteByte(first + byte(i%26))
		b.WriteByte('.')
	}
	b.WriteString("example.org.")
	return b.String()
}
