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
	if p, ok := r.ResponseWriter.(packer); ok {
		rcode := m.Rcode
		n, err := p.WriteMsgLen(m)
		r.record(rcode, n)
		return err
	}
	r.record(m.Rcode, m.Len())
	return r.ResponseWriter.WriteMsg(m)
}

// packer is the writer that packs the answer (fastpack's), where it is the
// one below: it says what m.Len() said of the message it was given,
// counted as it packed it. Msg.Len walks the whole message again, every
// name scanned for escapes, and was the first read of an answer's records
// not kept: 2.7% of the server's time where no answer is kept, 7.5% on a
// flood of names an NSEC3 zone lacks (bench/README.md, 2026-12-06). A
// writer between (rrl's, which may send a message of its own) is not
// looked through: m.Len() is read as before.
type packer interface {
	WriteMsgLen(m *dns.Msg) (int, error)
	WriteMsgKeepLen(r, m *dns.Msg, keep *replay.Answer) (int, error)
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
	if p, ok := r.ResponseWriter.(packer); ok {
		keep.Rcode = m.Rcode
		var err error
		keep.Len, err = p.WriteMsgKeepLen(req, m, keep)
		r.record(keep.Rcode, keep.Len)
		return err
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
