package rrl

import (
	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"
)

// limited counts the responses over the rate, by what was done with them.
// Responses within it are not counted here: nothing is written per query
// that every query shares. The drops are also codel's, with reason
// "ratelimit", where codel runs in front.
var limited = promauto.NewCounterVec(prometheus.CounterOpts{
	Namespace: plugin.Namespace,
	Subsystem: "rrl",
	Name:      "limited_total",
	Help:      "UDP responses over the rate limit: dropped, or sent truncated (slip).",
}, []string{"server", "action"})
