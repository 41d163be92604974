// Package alias resolves the targets of ALIAS records at query time, for
// an authoritative server whose workers must never wait on the network:
// lookups run on a bounded pool (a codel.Queue), concurrent lookups of one
// target and type share one upstream query, answers are cached for their
// TTL, and each waiting query comes back to its own queue, where CoDel
// checks it again. The record type itself is in package record.
package alias

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/codel"
)

// Config sets a Resolver's upstreams and bounds. Zero values mean the defaults.
type Config struct {
	Upstreams []string // host:port of recursive resolvers, tried in order
	// Timeout bounds each try (default 250ms). The tries of a lookup
	// should end within codel's deadline (500ms by default): past it, a
	// failed lookup's queries are dropped rather than answered SERVFAIL.
	Timeout time.Duration
	// Pool is how many lookups may wait on upstreams at once (default 32
	// per CPU: a lookup waits on the network, not on a CPU), and Queue how
	// many more may wait for the pool (default 1024).
	Pool, Queue int
	// ServeStale, when set, answers with the last good answer, up to this
	// long past its TTL, when every upstream fails (RFC 8767).
	ServeStale time.Duration
	// Deadline is the queries' deadline (default codel's): a lookup whose
	// query is older when the pool takes it is dropped, as codel drops it.
	Deadline time.Duration
	// Observe, if set, is told how long each upstream exchange took and
	// how it ended.
	Observe func(time.Duration, error)
}

// Key is what a lookup asks: the target's addresses of one type.
type Key struct {
	Target string // lowercase, fully qualified
	Type   uint16 // A or AAAA
}

// NewKey returns the key for target and t.
func NewKey(target string, t uint16) Key {
	return Key{Target: strings.ToLower(dns.Fqdn(target)), Type: t}
}

// Result is a lookup's outcome. Err == nil with no records is NODATA: the
// target exists without records of the type, or does not exist.
type Result struct {
	RRs   []dns.RR // the target's records, as upstream sent them: shared, do not modify
	TTL   uint32   // seconds they may still be kept
	Stale bool     // RRs are the last good answer, past its TTL (ServeStale)
	Err   error    // every upstream failed, or the lookup was dropped
}

// A Waiter is a query waiting for a lookup, away from its worker.
type Waiter interface {
	// Answer runs on a worker of the query's queue, back from the lookup.
	Answer(Result)
	// Drop runs instead when the query's time ran out while it was away.
	Drop(codel.Reason)
}

// Outcome counts how lookups were answered.
type Outcome uint8

const (
	Hit     Outcome = iota // a fresh cached answer
	Miss                   // asked upstream
	Shared                 // joined a lookup of the same key in flight
	Stale                  // upstreams failed; the last good answer served (ServeStale)
	Error                  // upstreams failed, or answered badly
	Timeout                // no upstream answered in time
	numOutcomes
)

// Outcomes lists every outcome, in order, for metrics.
var Outcomes = [numOutcomes]Outcome{Hit, Miss, Shared, Stale, Error, Timeout}

func (o Outcome) String() string {
	return [...]string{"hit", "miss", "shared", "stale", "error", "timeout"}[o]
}

// staleTTL is the TTL of a stale answer (RFC 8767 section 4 suggests 30 s).
const staleTTL = 30

// Resolver looks up ALIAS targets. It is safe for concurrent use.
type Resolver struct {
	cfg  Config
	pool *codel.Queue

	mu        sync.Mutex
	cache     map[Key]*entry
	flights   map[Key]*flight
	lastSweep int64

	counts [numOutcomes]atomic.Uint64
}

// entry is a cached answer.
type entry struct {
	rrs     []dns.RR
	ttl     uint32
	fetched int64 // codel.Now
}

func (e *entry) expires() int64 { return e.fetched + int64(e.ttl)*int64(time.Second) }

// flight is one upstream lookup and the queries waiting for it.
type flight struct {
	key     Key
	waiters []waiting
	done    chan struct{} // closed when res is set, for callers that block (Wait)
	res     Result
}

type waiting struct {
	hop codel.Hop
	w   Waiter
}

// New starts a resolver and its pool.
func New(cfg Config) (*Resolver, error) {
	if len(cfg.Upstreams) == 0 {
		return nil, errors.New("alias: no upstream")
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 250 * time.Millisecond
	}
	if cfg.Pool <= 0 {
		cfg.Pool = 32 * runtime.GOMAXPROCS(0)
	}
	if cfg.Queue <= 0 {
		cfg.Queue = 1024
	}
	r := &Resolver{cfg: cfg, cache: map[Key]*entry{}, flights: map[Key]*flight{}}
	r.pool = codel.New(codel.Config{
		Workers: cfg.Pool, MaxWorkers: cfg.Pool, Capacity: cfg.Queue, Deadline: cfg.Deadline,
		// Pool workers block by design, for as long as the upstreams may
		// take: the pool is stalled only when none finished in that time.
		StallAfter: cfg.Timeout * time.Duration(2*len(cfg.Upstreams)),
	})
	r.cfg.Deadline = r.pool.Config().Deadline
	return r, nil
}

// Close stops the pool; lookups in flight finish on their own.
func (r *Resolver) Close() { r.pool.Close() }

// Resolve answers k for a query away from its worker at hop. A fresh
// cached answer is returned at once (ok). Otherwise the query joins the
// lookup of k in flight, or starts one on the pool, and w hears of the
// result on a worker of hop's queue: CoDel checks the query there again.
func (r *Resolver) Resolve(k Key, hop codel.Hop, w Waiter) (Result, bool) {
	f, started, res, ok := r.join(k, hop, waiting{hop, w})
	if ok {
		return res, true
	}
	hop.Hold() // w waits on the flight, with the query's writer and messages
	if started {
		hop.Send(r.pool, &fetch{r, f})
	}
	return Result{}, false
}

// Wait is Resolve for a caller that may block (a TCP connection's
// goroutine, or a query served in place): it shares lookups and the pool
// with the others, and waits for the result.
func (r *Resolver) Wait(k Key, arrival int64) Result {
	hop := codel.Hop{Arrival: arrival}
	f, started, res, ok := r.join(k, hop, waiting{})
	if ok {
		return res
	}
	if started {
		hop.Send(r.pool, &fetch{r, f})
	}
	<-f.done
	return f.res
}

// Late reports whether a query that arrived at arrival is past the deadline.
func (r *Resolver) Late(arrival int64) bool {
	return codel.Now()-arrival > r.cfg.Deadline.Nanoseconds()
}

// join returns a fresh cached answer (ok), or the flight of k, with w
// added to its waiters, and whether this call started it (and must send it).
func (r *Resolver) join(k Key, hop codel.Hop, w waiting) (f *flight, started bool, res Result, ok bool) {
	now := codel.Now()
	r.mu.Lock()
	if e := r.cache[k]; e != nil && now < e.expires() {
		r.mu.Unlock()
		r.counts[Hit].Add(1)
		return nil, false, Result{RRs: e.rrs, TTL: e.ttl - uint32((now-e.fetched)/int64(time.Second))}, true
	}
	if f = r.flights[k]; f != nil {
		if w.w != nil {
			f.waiters = append(f.waiters, w)
		}
		r.mu.Unlock()
		r.counts[Shared].Add(1)
		return f, false, Result{}, false
	}
	f = &flight{key: k, done: make(chan struct{})}
	if w.w != nil {
		f.waiters = append(f.waiters, w)
	}
	r.flights[k] = f
	r.mu.Unlock()
	r.counts[Miss].Add(1)
	return f, true, Result{}, false
}

// fetch is a flight's upstream lookup, a task of the pool.
type fetch struct {
	r *Resolver
	f *flight
}

func (t *fetch) Run() {
	r, k := t.r, t.f.key
	start := time.Now()
	m, err := exchange(r.cfg.Upstreams, r.cfg.Timeout, k.Target, k.Type)
	if r.cfg.Observe != nil {
		r.cfg.Observe(time.Since(start), err)
	}
	if err != nil {
		if errors.Is(err, ErrTimeout) {
			r.counts[Timeout].Add(1)
		} else {
			r.counts[Error].Add(1)
		}
		r.finish(t.f, Result{Err: err})
		return
	}
	rrs, ttl := addresses(m, k.Target, k.Type)
	r.finish(t.f, Result{RRs: rrs, TTL: ttl})
}

// Drop: the pool dropped the lookup (full, or its query late). Its
// waiters go back as for a failed lookup; those late by now are dropped
// when their queue takes them back.
func (t *fetch) Drop(reason codel.Reason) {
	t.r.finish(t.f, Result{Err: fmt.Errorf("lookup of %s dropped by the pool: %s", t.f.key.Target, reason)})
}

// finish caches a good answer, or replaces a failure with a stale answer
// where allowed, and hands the result to every waiter.
func (r *Resolver) finish(f *flight, res Result) {
	now := codel.Now()
	r.mu.Lock()
	delete(r.flights, f.key)
	if res.Err == nil {
		r.cache[f.key] = &entry{rrs: res.RRs, ttl: res.TTL, fetched: now}
	} else if e := r.cache[f.key]; e != nil && r.cfg.ServeStale > 0 && now <= e.expires()+r.cfg.ServeStale.Nanoseconds() {
		res = Result{RRs: e.rrs, TTL: staleTTL, Stale: true}
		r.counts[Stale].Add(1)
	}
	if now-r.lastSweep > int64(time.Minute) {
		r.sweep(now)
	}
	f.res = res
	waiters := f.waiters
	f.waiters = nil
	r.mu.Unlock()
	close(f.done)
	for _, w := range waiters {
		w.hop.Back(&resumed{w.w, res})
	}
}

// sweep forgets answers past their TTL and their stale window. The keys
// are the targets of the zones' ALIAS records, so the cache is bounded by
// the zones; a sweep keeps targets removed from them from staying forever.
// Called with r.mu held.
func (r *Resolver) sweep(now int64) {
	r.lastSweep = now
	for k, e := range r.cache {
		if now > e.expires()+r.cfg.ServeStale.Nanoseconds() {
			delete(r.cache, k)
		}
	}
}

// resumed is a waiter's return to its queue.
type resumed struct {
	w   Waiter
	res Result
}

func (t *resumed) Run()                  { t.w.Answer(t.res) }
func (t *resumed) Drop(why codel.Reason) { t.w.Drop(why) }

// Stats is a snapshot of a resolver's counts.
type Stats struct {
	Lookups [numOutcomes]uint64 // by Outcome
	Cached  int                 // answers in the cache
	Pool    codel.Stats         // the pool's queue: its length and drops
}

// Stats returns the resolver's counts now.
func (r *Resolver) Stats() Stats {
	var s Stats
	for i := range s.Lookups {
		s.Lookups[i] = r.counts[i].Load()
	}
	r.mu.Lock()
	s.Cached = len(r.cache)
	r.mu.Unlock()
	s.Pool = r.pool.Stats()
	return s
}
