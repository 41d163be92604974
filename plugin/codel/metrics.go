package codel

import (
	"sync"

	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/ontimedns/ontime/codel"
)

// The queues' counts live in the queues, written on the hot path only by
// the worker that owns them; this collector sums them when scraped.
var (
	dropsDesc    = desc("drops_total", "Queries dropped, by reason: full (the queue was full), codel (waited too long by the CoDel law), deadline (older than the deadline at some hop), workers (every worker blocked and no more allowed), ratelimit (by rrl), tcp (a TCP connection refused at a bound), malformed (a UDP datagram too short to be a query).", "reason")
	sojournDesc  = desc("sojourn_seconds", "How long served queries waited, from arrival to the moment a worker took them.")
	queueDesc    = desc("queue_length", "Queries waiting now.")
	droppingDesc = desc("dropping", "1 while CoDel's control law is in its dropping state.")
	overloadDesc = desc("overloaded", "1 while overloaded (waits stayed above target for the last whole interval): newest first, and anything older than twice the target shed.")
	workersDesc  = desc("workers", "Workers running now, replacements for blocked ones included.")
	panicsDesc   = desc("panics_total", "Queries whose chain panicked on a worker; each got SERVFAIL and the worker went on.")
	readsDesc    = desc("socket_reads_total", "UDP queries that codel read off the server's socket itself (the rest came through CoreDNS's reader).")
	acceptsDesc  = desc("tcp_accepts_total", "TCP connections that codel's own listeners took, refused ones included (the rest went to CoreDNS's listener).")
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(plugin.Namespace, pluginName, name), help, append([]string{"server"}, labels...), nil)
}

// registry is the set of running codel instances, and the counts of
// those that stopped, by server. A Corefile reload stops one instance and
// starts another under the same server label: its counters go on from
// where the stopped one left them, as CoreDNS's own do, and what the
// stopped one dropped while it drained its queue (its last act) is
// counted there, not lost with it.
type registry struct {
	mu        sync.Mutex
	instances map[*Codel]bool
	// draining are stopped instances with a worker still at work: a
	// queue's Close waits for its workers only up to the deadline, and
	// one left behind (a plugin that blocks, a machine that did not run
	// it) still serves, or drops what waited behind it. Their counts are
	// read live until the last worker exits, then kept.
	draining map[*Codel]bool
	stopped  map[string]*stoppedCounts
}

// stoppedCounts are the counters of a server's stopped instances: its
// Stats with the gauges (queued, workers, states) left out, its reads and
// its listeners' TCP accepts.
type stoppedCounts struct {
	stats   codel.Stats
	reads   uint64
	accepts uint64
}

var queues = newRegistry()

func newRegistry() *registry {
	return &registry{instances: map[*Codel]bool{}, draining: map[*Codel]bool{}, stopped: map[string]*stoppedCounts{}}
}

func init() { prometheus.MustRegister(queues) }

func (r *registry) add(c *Codel) {
	r.mu.Lock()
	r.instances[c] = true
	r.mu.Unlock()
}

// remove takes c, stopped (its queue closed), out of the running
// instances. Its counters are kept under its server once its last worker
// has exited (at once, nearly always), in one step, so that a scrape
// counts them once, live or kept.
func (r *registry) remove(c *Codel) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.instances[c] {
		return
	}
	delete(r.instances, c)
	select {
	case <-c.q.Exited():
		r.keep(c)
		return
	default:
	}
	r.draining[c] = true
	go func() {
		<-c.q.Exited()
		r.mu.Lock()
		delete(r.draining, c)
		r.keep(c)
		r.mu.Unlock()
	}()
}

// keep adds the counts of c, whose workers have all exited, to its
// server's kept ones. r.mu is held.
func (r *registry) keep(c *Codel) {
	st, reads, accepts := stoppedCountsOf(c)
	kept := r.stopped[c.server]
	if kept == nil {
		kept = &stoppedCounts{}
		r.stopped[c.server] = kept
	}
	kept.stats.Add(st)
	kept.reads += reads
	kept.accepts += accepts
}

// stoppedCountsOf returns the counters of c, stopped: its Stats without
// the gauges, its reads and its TCP accepts.
func stoppedCountsOf(c *Codel) (codel.Stats, uint64, uint64) {
	st := c.q.Stats()
	st.Queued, st.Workers, st.Dropping, st.Overload = 0, 0, false, false
	return st, c.socketReads(), c.tcpAccepts.Load()
}

// Describe implements prometheus.Collector.
func (r *registry) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dropsDesc, sojournDesc, queueDesc, droppingDesc, overloadDesc, workersDesc, panicsDesc, readsDesc, acceptsDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. Server blocks that share a
// listener have a queue each; their counts are summed under its label.
func (r *registry) Collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	sums := map[string]*codel.Stats{}
	reads, accepts := map[string]uint64{}, map[string]uint64{}
	add := func(server string, st codel.Stats, n, a uint64) {
		reads[server] += n
		accepts[server] += a
		if s, ok := sums[server]; ok {
			s.Add(st)
		} else {
			sums[server] = &st
		}
	}
	for server, kept := range r.stopped {
		add(server, kept.stats, kept.reads, kept.accepts)
	}
	for c := range r.draining {
		st, n, a := stoppedCountsOf(c)
		add(c.server, st, n, a)
	}
	for c := range r.instances {
		add(c.server, c.q.Stats(), c.socketReads(), c.tcpAccepts.Load())
	}
	r.mu.Unlock()

	for server, st := range sums {
		for _, reason := range codel.Reasons {
			ch <- prometheus.MustNewConstMetric(dropsDesc, prometheus.CounterValue, float64(st.Drops[reason]), server, reason.String())
		}
		buckets := make(map[float64]uint64, len(codel.SojournBounds))
		var cum uint64
		for i, le := range codel.SojournBounds {
			cum += st.Sojourn[i]
			buckets[le] = cum
		}
		ch <- prometheus.MustNewConstHistogram(sojournDesc, st.Served, st.SojournSum, buckets, server)
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(st.Queued), server)
		dropping := 0.0
		if st.Dropping {
			dropping = 1
		}
		ch <- prometheus.MustNewConstMetric(droppingDesc, prometheus.GaugeValue, dropping, server)
		overloaded := 0.0
		if st.Overload {
			overloaded = 1
		}
		ch <- prometheus.MustNewConstMetric(overloadDesc, prometheus.GaugeValue, overloaded, server)
		ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(st.Workers), server)
		ch <- prometheus.MustNewConstMetric(panicsDesc, prometheus.CounterValue, float64(st.Panics), server)
		ch <- prometheus.MustNewConstMetric(readsDesc, prometheus.CounterValue, float64(reads[server]), server)
		ch <- prometheus.MustNewConstMetric(acceptsDesc, prometheus.CounterValue, float64(accepts[server]), server)
	}
}
