package fastpack

import (
	"context"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/chain"
)

// Fastpack wraps the ResponseWriter for every plugin after it.
type Fastpack struct {
	Next plugin.Handler
}

// ServeDNS implements plugin.Handler. The writer is a fresh value, not a
// pooled one: a plugin after this one (codel) may write the answer after
// ServeDNS has returned, from another goroutine.
func (f Fastpack) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	return chain.Next(pluginName, f.Next, ctx, &Writer{ResponseWriter: w, req: r}, r)
}

// Name implements plugin.Handler.
func (f Fastpack) Name() string { return pluginName }
