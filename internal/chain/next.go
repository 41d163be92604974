// Package chain calls the next plugin of a CoreDNS chain.
package chain

import (
	"context"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"
	ot "github.com/opentracing/opentracing-go"
)

// Next calls next as plugin.NextOrFailure does, without the writer that
// NextOrFailure wraps around w at every hop where that writer would do
// nothing. The wrapper (one allocation a query per hop) tells w which
// plugin wrote the answer, and only when w is a plugin.PluginTracker (the
// metrics plugin's recorder); NextOrFailure also opens a trace span when
// the query carries one. Where neither applies, next is called directly:
// the same answer, the same metrics.
func Next(name string, next plugin.Handler, ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if next == nil || ot.SpanFromContext(ctx) != nil {
		return plugin.NextOrFailure(name, next, ctx, w, r)
	}
	if _, tracker := w.(plugin.PluginTracker); tracker {
		return plugin.NextOrFailure(name, next, ctx, w, r)
	}
	return next.ServeDNS(ctx, w, r)
}
