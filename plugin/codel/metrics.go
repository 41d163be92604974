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
	dropsDesc    = desc("drops_total", "Queries dropped, by reason: full (the queue was full), codel (waited too long by the CoDel law), deadline (older than the deadline at some hop), workers (every worker blocked and no more allowed).", "reason")
	sojournDesc  = desc("sojourn_seconds", "How long served queries waited, from arrival to the moment a worker took them.")
	queueDesc    = desc("queue_length", "Queries waiting now.")
	droppingDesc = desc("dropping", "1 while CoDel is in its dropping state.")
	workersDesc  = desc("workers", "Workers running now, replacements for blocked ones included.")
	panicsDesc   = desc("panics_total", "Queries whose chain panicked on a worker; each got SERVFAIL and the worker went on.")
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(plugin.Namespace, pluginName, name), help, append([]string{"server"}, labels...), nil)
}

// registry is the set of running queues, each with its server's label.
type registry struct {
	mu     sync.Mutex
	queues map[*codel.Queue]string
}

var queues = &registry{queues: map[*codel.Queue]string{}}

func init() { prometheus.MustRegister(queues) }

func (r *registry) add(q *codel.Queue, server string) {
	r.mu.Lock()
	r.queues[q] = server
	r.mu.Unlock()
}

func (r *registry) remove(q *codel.Queue) {
	r.mu.Lock()
	delete(r.queues, q)
	r.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (r *registry) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{dropsDesc, sojournDesc, queueDesc, droppingDesc, workersDesc, panicsDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector. Server blocks that share a
// listener have a queue each; their counts are summed under its label.
func (r *registry) Collect(ch chan<- prometheus.Metric) {
	r.mu.Lock()
	sums := map[string]*codel.Stats{}
	for q, server := range r.queues {
		st := q.Stats()
		s, ok := sums[server]
		if !ok {
			sums[server] = &st
			continue
		}
		for i := range s.Drops {
			s.Drops[i] += st.Drops[i]
		}
		for i := range s.Sojourn {
			s.Sojourn[i] += st.Sojourn[i]
		}
		s.Queued += st.Queued
		s.Workers += st.Workers
		s.Dropping = s.Dropping || st.Dropping
		s.Served += st.Served
		s.SojournSum += st.SojournSum
		s.Panics += st.Panics
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
		ch <- prometheus.MustNewConstMetric(workersDesc, prometheus.GaugeValue, float64(st.Workers), server)
		ch <- prometheus.MustNewConstMetric(panicsDesc, prometheus.CounterValue, float64(st.Panics), server)
	}
}
