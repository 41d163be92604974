package fastpack

import (
	"crypto/tls"
	"sync"

	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/replay"
	"github.com/ontimedns/ontime/wire"
)

// Writer packs each message with wire.Encoder and writes the bytes. It does
// what CoreDNS's ScrubWriter does before packing (the OPT record mirrors the
// request's, the message fits the client's UDP size or 65535 over TCP), in
// the encoder's one pass instead of Truncate's repeated measuring.
type Writer struct {
	dns.ResponseWriter
	req *dns.Msg
	// replays: answers it packs may be kept and written again (replay):
	// a UDP query read by codel's reader, or a query over a stream
	// (stream). Over UDP an answer's size and truncation are the
	// request's, which a key holds; over a stream the answer is packed to
	// 65,535 octets, and the key says it came over one.
	replays, stream bool
	expire          *expirer // answers EXPIRE in the messages of a transfer that asked (expire.go); nil: none
}

// buffers holds encoders with their output buffers. sync.Pool keeps one per
// P, so getting one writes no memory that other cores share.
var buffers = sync.Pool{New: func() any { return &buffer{enc: wire.NewEncoder(), out: make([]byte, 0, 4096)} }}

type buffer struct {
	enc *wire.Encoder
	out []byte
}

// WriteMsg implements dns.ResponseWriter.
func (w *Writer) WriteMsg(m *dns.Msg) error {
	_, _, err := w.write(m, nil, false, false)
	return err
}

// WriteMsgLen writes m as WriteMsg does, and returns what m.Len() said of
// it as given: counted as it was packed (wire.Encoder's Len), where a
// plugin above that records each answer's size (shardmetrics's recorder)
// read it through another walk of the message before.
func (w *Writer) WriteMsgLen(m *dns.Msg) (int, error) {
	n, _, err := w.write(m, nil, false, true)
	return n, err
}

// Replays implements replay.Writer: for a UDP query codel's reader read, and
// a query over a stream.
func (w *Writer) Replays() bool { return w.replays }

// WriteMsgKeep implements replay.Writer: it appends what it packed to
// keep, where it replays and r is the request this writer was made for
// (WritePacked).
func (w *Writer) WriteMsgKeep(r, m *dns.Msg, keep *replay.Answer) error {
	var err error
	_, keep.Wire, err = w.write(m, keep.Wire, w.replays && r == w.req, false)
	return err
}

// WriteMsgKeepLen is WriteMsgKeep, and returns what m.Len() said of m as
// given, as WriteMsgLen does.
func (w *Writer) WriteMsgKeepLen(r, m *dns.Msg, keep *replay.Answer) (int, error) {
	var n int
	var err error
	n, keep.Wire, err = w.write(m, keep.Wire, w.replays && r == w.req, true)
	return n, err
}

// WritePacked implements replay.Writer: an answer it packed before, for a
// request with the same key, is written as it was, where it replays and r
// is the request this writer was made for (the one whose OPT record and
// size it packs for; a plugin between may have put another in its place),
// over the transport it was kept for (an answer kept for UDP may be
// truncated to the request's size).
func (w *Writer) WritePacked(r *dns.Msg, a *replay.Answer) (bool, error) {
	if !w.replays || r != w.req || a.Stream != w.stream {
		return false, nil
	}
	_, err := w.ResponseWriter.Write(a.Wire)
	return true, err
}

// write packs m and writes it; where keep is asked for, it appends the
// octets written to it. Where count is asked for, it returns m.Len() of
// m as given: before SizeAndDo, which may add an OPT record to m, or
// rename m's own to the root.
func (w *Writer) write(m *dns.Msg, keep []byte, keeping, count bool) (int, []byte, error) {
	if m.IsTsig() != nil {
		// The TSIG MAC covers the packed message: the standard path signs it.
		n := lenIf(m, count)
		m.Extra = w.transferExpire(m)
		fallbacks.WithLabelValues("tsig").Inc()
		return n, keep, w.ResponseWriter.WriteMsg(m)
	}
	given := -1 // m.Len() before SizeAndDo, where it renames m's OPT record
	if count {
		if o := m.IsEdns0(); o != nil && o.Hdr.Name != "." {
			given = m.Len()
		}
	}
	extra := len(m.Extra)
	m.Extra = w.transferExpire(m) // an OPT record added, as SizeAndDo adds one
	state := request.Request{Req: w.req, W: w.ResponseWriter}
	state.SizeAndDo(m)
	added := len(m.Extra) > extra // the request's OPT record, or transferExpire's, appended

	b := buffers.Get().(*buffer)
	out, err := b.enc.Encode(b.out, m, state.Size())
	n := -1
	if count {
		switch {
		case given >= 0:
			n = given
		case err == nil && b.enc.Len >= 0:
			n = b.enc.Len
			if added {
				n -= b.enc.OPTLen
			}
		default: // not counted as packed: a truncated answer, or one the encoder refuses
			n = m.Len()
			if added {
				n -= dns.Len(m.Extra[len(m.Extra)-1])
			}
		}
	}
	if err != nil {
		// A message the encoder refuses is one miekg/dns may still pack
		// (or fail on the same way): its error is the one to return.
		b.out = out
		buffers.Put(b)
		fallbacks.WithLabelValues("encode").Inc()
		return n, keep, w.ResponseWriter.WriteMsg(m)
	}
	if b.enc.Fallbacks > 0 {
		recordFallbacks.Add(float64(b.enc.Fallbacks))
	}
	_, err = w.ResponseWriter.Write(out)
	if keeping && err == nil {
		keep = append(keep, out...)
	}
	b.out = out[:0]
	buffers.Put(b)
	return n, keep, err
}

// lenIf is m.Len() where count is asked for, -1 otherwise.
func lenIf(m *dns.Msg, count bool) int {
	if !count {
		return -1
	}
	return m.Len()
}

// ConnectionState forwards the TLS state of the writer below, as
// ScrubWriter does, so plugins that read SNI keep working.
func (w *Writer) ConnectionState() *tls.ConnectionState {
	if cs, ok := w.ResponseWriter.(dns.ConnectionStater); ok {
		return cs.ConnectionState()
	}
	return nil
}
