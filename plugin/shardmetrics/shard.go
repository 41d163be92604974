package shardmetrics

import (
	"runtime"
	"sync"

	"github.com/prometheus/client_golang/prometheus"
)

// key is the label values of one query's metrics: each family's labels
// are a part of it.
type key struct {
	server, zone, view, proto, family, qtype, rcode, plugin string
	do                                                      bool
}

// series is one key's metrics in one shard: children of the shard's vecs,
// looked up once, when the shard first meets the key.
type series struct {
	requests, do, rcode         prometheus.Counter // do: nil unless key.do
	duration, reqSize, respSize prometheus.Observer
}

// A shard is a set of the query families that one query at a time counts
// into: no other core writes its memory while a query holds it. Only
// scrapes read it, through its vecs, whose children count atomically.
type shard struct {
	vecs   *vecs
	series map[key]*series // the holder's alone
	recent [recentSlots]recentSeries
}

// recent is a direct-mapped cache in front of series, placed by the key's
// small numbers (qtype, rcode) and checked by comparing the whole key. The
// map hashes all eight strings of a key on every lookup; here equal labels
// are nearly always the same strings (the tables' labels, the server's
// address), which compare by pointer.
const recentSlots = 32

type recentSeries struct {
	k  key
	se *series
}

// seriesOf returns k's series; slot is any number the caller derives from
// k, to spread keys over recent.
func (s *shard) seriesOf(k key, slot uint) *series {
	r := &s.recent[slot%recentSlots]
	if r.se != nil && r.k == k {
		return r.se
	}
	se := s.series[k]
	if se == nil {
		se = s.newSeries(k)
	}
	*r = recentSeries{k, se}
	return se
}

func (s *shard) newSeries(k key) *series {
	v := s.vecs
	se := &series{
		requests: v.requests.WithLabelValues(k.server, k.zone, k.view, k.proto, k.family, k.qtype),
		rcode:    v.rcode.WithLabelValues(k.server, k.zone, k.view, k.rcode, k.plugin),
		duration: v.duration.WithLabelValues(k.server, k.zone, k.view),
		reqSize:  v.reqSize.WithLabelValues(k.server, k.zone, k.view, k.proto),
		respSize: v.respSize.WithLabelValues(k.server, k.zone, k.view, k.proto),
	}
	if k.do {
		se.do = v.do.WithLabelValues(k.server, k.zone, k.view)
	}
	s.series[k] = se
	return se
}

// shards holds every shard ever made, so that a scrape sums them all and
// no count is lost; idle are those no handle holds any more.
var shards struct {
	mu   sync.Mutex
	all  []*shard
	idle []*shard
}

// A handle is how the pool keeps a shard. sync.Pool keeps handles per P,
// so taking one and putting it back writes no memory another core uses;
// the pool drops handles at garbage collections, and a dropped handle's
// cleanup makes its shard idle, for the next handle the pool makes.
type handle struct{ s *shard }

var handles = sync.Pool{New: func() any {
	h := &handle{s: takeShard()}
	runtime.AddCleanup(h, idle, h.s)
	return h
}}

func takeShard() *shard {
	shards.mu.Lock()
	defer shards.mu.Unlock()
	if n := len(shards.idle); n > 0 {
		s := shards.idle[n-1]
		shards.idle = shards.idle[:n-1]
		return s
	}
	s := &shard{vecs: newVecs(), series: make(map[key]*series)}
	shards.all = append(shards.all, s)
	return s
}

func idle(s *shard) {
	shards.mu.Lock()
	shards.idle = append(shards.idle, s)
	shards.mu.Unlock()
}

// allShards returns the shards made so far.
func allShards() []*shard {
	shards.mu.Lock()
	defer shards.mu.Unlock()
	return shards.all[:len(shards.all):len(shards.all)]
}
