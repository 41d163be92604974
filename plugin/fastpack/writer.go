package fastpack

import (
	"crypto/tls"
	"sync"

	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/wire"
)

// Writer packs each message with wire.Encoder and writes the bytes. It does
// what CoreDNS's ScrubWriter does before packing (the OPT record mirrors the
// request's, the message fits the client's UDP size or 65535 over TCP), in
// the encoder's one pass instead of Truncate's repeated measuring.
type Writer struct {
	dns.ResponseWriter
	req *dns.Msg
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
	if m.IsTsig() != nil {
		// The TSIG MAC covers the packed message: the standard path signs it.
		fallbacks.WithLabelValues("tsig").Inc()
		return w.ResponseWriter.WriteMsg(m)
	}
	state := request.Request{Req: w.req, W: w.ResponseWriter}
	state.SizeAndDo(m)

	b := buffers.Get().(*buffer)
	out, err := b.enc.Encode(b.out, m, state.Size())
	if err != nil {
		// A message the encoder refuses is one miekg/dns may still pack
		// (or fail on the same way): its error is the one to return.
		b.out = out
		buffers.Put(b)
		fallbacks.WithLabelValues("encode").Inc()
		return w.ResponseWriter.WriteMsg(m)
	}
	if b.enc.Fallbacks > 0 {
		recordFallbacks.Add(float64(b.enc.Fallbacks))
	}
	_, err = w.ResponseWriter.Write(out)
	b.out = out[:0]
	buffers.Put(b)
	return err
}

// ConnectionState forwards the TLS state of the writer below, as
// ScrubWriter does, so plugins that read SNI keep working.
func (w *Writer) ConnectionState() *tls.ConnectionState {
	if cs, ok := w.ResponseWriter.(dns.ConnectionStater); ok {
		return cs.ConnectionState()
	}
	return nil
}
