package fastpack

import (
	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// Only the rare paths are counted: a counter written by every response
// would be a cache line that every core fights over.
var (
	fallbacks = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "fallbacks_total",
		Help:      "Responses left to the standard miekg/dns encoder, by reason: tsig (signed responses) or encode (a message the fast encoder refused).",
	}, []string{"reason"})
	recordFallbacks = promauto.NewCounter(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "record_fallbacks_total",
		Help:      "Records whose RDATA the fast encoder handed to miekg/dns because it does not cover their type; the rest of the message stayed on the fast path.",
	})
)
