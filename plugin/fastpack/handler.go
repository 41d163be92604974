package fastpack

import (
	"context"
	"sync"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/chain"
)

// Fastpack wraps the ResponseWriter for every plugin after it.
type Fastpack struct {
	Next   plugin.Handler
	expire *expirer // the block's answerer of EXPIRE for transfers (expire.go)
}

// ServeDNS implements plugin.Handler. The writer is made again for the
// next query only where the query has a Life (read by codel's reader):
// elsewhere a plugin after this one (codel) may write the answer after
// ServeDNS has returned, from another goroutine, and it is a fresh value.
func (f Fastpack) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if hop, ok := codel.FromContext(ctx); ok && hop.Life != nil {
		pw := writers.Get().(*Writer)
		// A Life: a UDP query codel's reader read, whose answer may be kept.
		*pw = Writer{ResponseWriter: w, req: r, replays: true, expire: f.expire.asked(r)}
		hop.Life.AtEnd(pw) // false: it is this query's alone, never put back
		return chain.Next(pluginName, f.Next, ctx, pw, r)
	}
	// Over a stream (TCP, and TLS, HTTPS... as request.Request reads
	// them), an answer is packed to 65,535 octets whatever the request's
	// UDP size: kept apart from UDP's (replay.Key), and replayed. Not a
	// UDP query no codel reader read (a server without codel).
	stream := (&request.Request{Req: r, W: w}).Proto() == "tcp"
	return chain.Next(pluginName, f.Next, ctx, &Writer{ResponseWriter: w, req: r, replays: stream, stream: stream, expire: f.expire.asked(r)}, r)
}

// writers keeps the writers of queries that ended (End).
var writers = sync.Pool{New: func() any { return new(Writer) }}

// End implements codel.Ender: the query is done with the writer.
func (w *Writer) End() {
	*w = Writer{}
	writers.Put(w)
}

// Name implements plugin.Handler.
func (f Fastpack) Name() string { return pluginName }
