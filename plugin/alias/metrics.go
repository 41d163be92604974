package alias

import (
	"errors"
	"sync"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/ontimedns/ontime/alias"
	"github.com/ontimedns/ontime/codel"
)

// lookupDuration is the upstream exchanges' latency, by how they ended.
var lookupDuration = promauto.NewHistogramVec(prometheus.HistogramOpts{
	Namespace: plugin.Namespace,
	Subsystem: pluginName,
	Name:      "lookup_duration_seconds",
	Help:      "How long upstream lookups of ALIAS targets took, by result (ok, error, timeout).",
	Buckets:   []float64{0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5},
}, []string{"server", "result"})

func observe(a *Alias) func(time.Duration, error) {
	return func(d time.Duration, err error) {
		result := "ok"
		switch {
		case err == nil:
		case errors.Is(err, alias.ErrTimeout):
			result = "timeout"
		default:
			result = "error"
		}
		lookupDuration.WithLabelValues(a.server, result).Observe(d.Seconds())
	}
}

// The resolvers keep their own counts; this collector reads them when scraped.
var (
	lookupsDesc  = desc("lookups_total", "Lookups of ALIAS targets, by result: hit (cache), miss (asked upstream), shared (joined a lookup in flight), stale (upstreams failed, the last good answer served), error and timeout (upstream lookups that failed).", "result")
	queueDesc    = desc("pool_queue_length", "Lookups waiting for the pool.")
	dropsDesc    = desc("pool_drops_total", "Lookups the pool dropped, by reason (as codel's drops_total); their queries are answered as for a failed lookup, or dropped if late by then.", "reason")
	cachedDesc   = desc("cache_entries", "Answers held in the cache.")
	unsignedDesc = desc("unsigned_total", "ALIAS answers sent unsigned to DNSSEC-aware clients from a pre-signed zone, with no dnssec plugin to sign them online.")
)

func desc(name, help string, labels ...string) *prometheus.Desc {
	return prometheus.NewDesc(prometheus.BuildFQName(plugin.Namespace, pluginName, name), help, append([]string{"server"}, labels...), nil)
}

type registry struct {
	mu        sync.Mutex
	instances map[*Alias]bool
}

var resolvers = &registry{instances: map[*Alias]bool{}}

func init() { prometheus.MustRegister(resolvers) }

func (r *registry) add(a *Alias) {
	r.mu.Lock()
	r.instances[a] = true
	r.mu.Unlock()
}

func (r *registry) remove(a *Alias) {
	r.mu.Lock()
	delete(r.instances, a)
	r.mu.Unlock()
}

// Describe implements prometheus.Collector.
func (r *registry) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{lookupsDesc, queueDesc, dropsDesc, cachedDesc, unsignedDesc} {
		ch <- d
	}
}

// Collect implements prometheus.Collector, summing the server blocks of one listener.
func (r *registry) Collect(ch chan<- prometheus.Metric) {
	type sum struct {
		st       alias.Stats
		unsigned uint64
	}
	sums := map[string]*sum{}
	r.mu.Lock()
	for a := range r.instances {
		s := sums[a.server]
		if s == nil {
			s = &sum{}
			sums[a.server] = s
		}
		st := a.res.Stats()
		for i := range st.Lookups {
			s.st.Lookups[i] += st.Lookups[i]
		}
		s.st.Cached += st.Cached
		s.st.Pool.Add(st.Pool)
		s.unsigned += a.unsigned.Load()
	}
	r.mu.Unlock()
	for server, s := range sums {
		for _, o := range alias.Outcomes {
			ch <- prometheus.MustNewConstMetric(lookupsDesc, prometheus.CounterValue, float64(s.st.Lookups[o]), server, o.String())
		}
		ch <- prometheus.MustNewConstMetric(queueDesc, prometheus.GaugeValue, float64(s.st.Pool.Queued), server)
		for _, reason := range codel.Reasons {
			ch <- prometheus.MustNewConstMetric(dropsDesc, prometheus.CounterValue, float64(s.st.Pool.Drops[reason]), server, reason.String())
		}
		ch <- prometheus.MustNewConstMetric(cachedDesc, prometheus.GaugeValue, float64(s.st.Cached), server)
		ch <- prometheus.MustNewConstMetric(unsignedDesc, prometheus.CounterValue, float64(s.unsigned), server)
	}
}
