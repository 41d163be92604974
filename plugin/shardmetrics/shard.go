package shardmetrics

import (
	"runtime"
	"sync"
	"time"
)

// key is the label values of one query's metrics: each family's labels
// are a part of it.
type key struct {
	server, zone, view, proto, family, qtype, rcode, plugin string
	do                                                      bool
}

// series is one key's counts in one shard.
type series struct {
	k                           key
	created                     time.Time
	requests, do, rcode         uint64 // do: counted only where k.do
	duration, reqSize, respSize hist
}

// A shard is a set of the query families that one query at a time counts
// into: no other core writes its memory while a query holds it. A query
// counts under mu, which only a scrape, reading, ever takes too; the counts
// are plain numbers (a prometheus vec's children count with atomic
// additions, five and a map lookup for each observation of a histogram).
type shard struct {
	mu     sync.Mutex
	series map[key]*series // the holder's alone, but for scrapes under mu
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
// k, to spread keys over recent. Called under mu.
func (s *shard) seriesOf(k key, slot uint) *series {
	r := &s.recent[slot%recentSlots]
	if r.se != nil && r.k == k {
		return r.se
	}
	se := s.series[k]
	if se == nil {
		se = &series{k: k, created: time.Now(),
			duration: newHist(durationKind), reqSize: newHist(sizeKind), respSize: newHist(sizeKind)}
		s.series[k] = se
	}
	*r = recentSeries{k, se}
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
	s := &shard{series: make(map[key]*series)}
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
