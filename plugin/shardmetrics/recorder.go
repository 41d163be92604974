package shardmetrics

import (
	"sync"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/chain"
	"github.com/ontimedns/ontime/replay"
)

// recorder does for a query what the stock plugin's Recorder and the
// writer NextOrFailure wraps around it do together: it records the
// answer's rcode and size, and, once anything is written, the name of the
// plugin the query was handed to. Like the stock recorder it is no
// plugin.PluginTracker, so the plugins below it wrap nothing around it.
type recorder struct {
	dns.ResponseWriter
	rcode, size int
	plugin      string // set on the first write
	next        string // the plugin the query was handed to
	start       int64  // on codel.Now's clock (time.Now reads two): when a worker took the query (Hop.Taken), or when the handler began
}

func (r *recorder) WriteMsg(m *dns.Msg) error {
	r.record(m.Rcode, m.Len())
	return r.ResponseWriter.WriteMsg(m)
}

// record records an answer written as a message: its rcode and Msg.Len.
func (r *recorder) record(rcode, size int) {
	r.plugin = r.next
	r.rcode = rcode
	r.size += size
}

// Replays implements replay.Writer: where the writer below replays.
func (r *recorder) Replays() bool {
	rw, ok := chain.ReplayWriter(r.ResponseWriter)
	return ok && rw.Replays()
}

// WriteMsgKeep implements replay.Writer, where the writer below is one:
// it records m as WriteMsg does, and keeps with the answer the rcode and
// Msg.Len it read, for WritePacked.
func (r *recorder) WriteMsgKeep(req, m *dns.Msg, keep *replay.Answer) error {
	rw, ok := chain.ReplayWriter(r.ResponseWriter)
	if !ok {
		return r.WriteMsg(m)
	}
	keep.Rcode, keep.Len = m.Rcode, m.Len()
	r.record(keep.Rcode, keep.Len)
	return rw.WriteMsgKeep(req, m, keep)
}

// WritePacked implements replay.Writer, where the writer below is one: it
// records what WriteMsg would have of the answer's message, its rcode and
// Msg.Len, kept with it.
func (r *recorder) WritePacked(req *dns.Msg, a *replay.Answer) (bool, error) {
	rw, ok := chain.ReplayWriter(r.ResponseWriter)
	if !ok {
		return false, nil
	}
	done, err := rw.WritePacked(req, a)
	if done {
		r.record(a.Rcode, a.Len)
	}
	return done, err
}

func (r *recorder) Write(b []byte) (int, error) {
	r.plugin = r.next
	n, err := r.ResponseWriter.Write(b)
	if err == nil {
		r.size += n
	}
	return n, err
}

// recorders keeps the recorders of queries that ended.
var recorders = sync.Pool{New: func() any { return new(recorder) }}

// End implements codel.Ender: the query is done with the recorder.
func (r *recorder) End() {
	*r = recorder{}
	recorders.Put(r)
}
