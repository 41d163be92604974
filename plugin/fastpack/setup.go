// Package fastpack is the CoreDNS adapter of the wire encoder: it wraps the
// ResponseWriter so that every response written by the plugins after it is
// packed by wire.Encoder, in one pass, into a pooled buffer.
package fastpack

import (
	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/pkg/transport"
)

const pluginName = "fastpack"

var log = clog.NewWithPlugin(pluginName)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	for c.Next() {
		if len(c.RemainingArgs()) > 0 {
			return plugin.Error(pluginName, c.ArgErr())
		}
		if c.NextBlock() {
			return plugin.Error(pluginName, c.Errf("fastpack takes no block, found %q", c.Val()))
		}
	}
	cfg := dnsserver.GetConfig(c)
	// DoH, DoQ and gRPC writers do their own packing: only the plain DNS
	// and DNS-over-TLS writers send what Write is given as it is.
	if cfg.Transport != transport.DNS && cfg.Transport != transport.TLS {
		log.Warningf("server %s uses transport %q: responses stay on the standard encoder", cfg.Zone, cfg.Transport)
		return nil
	}
	x := new(expirer)
	c.OnStartup(func() error { x.find(cfg); return nil })
	cfg.AddPlugin(func(next plugin.Handler) plugin.Handler { return Fastpack{Next: next, expire: x} })
	return nil
}
