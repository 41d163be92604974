// Package alias is the CoreDNS adapter of the alias library: it answers A
// and AAAA questions at names that hold an ALIAS record with the target's
// addresses, resolved at query time, without a worker ever waiting for them.
package alias

import (
	"strconv"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/plugin/pkg/parse"

	"github.com/ontimedns/ontime/alias"
	_ "github.com/ontimedns/ontime/alias/record" // zone files may hold ALIAS
	"github.com/ontimedns/ontime/internal/serverlabel"
)

const pluginName = "alias"

var log = clog.NewWithPlugin(pluginName)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	a, err := parseAlias(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	config := dnsserver.GetConfig(c)
	a.server = serverlabel.Of(config)
	c.OnStartup(func() error {
		// Every handler of the server block is known by now, and no query
		// has been served yet.
		if h, ok := config.Handler("codel").(interface{ Deadline() time.Duration }); ok {
			a.cfg.Deadline = h.Deadline()
		}
		a.signer = config.Handler("dnssec") != nil
		r, err := alias.New(a.cfg)
		if err != nil {
			return plugin.Error(pluginName, err)
		}
		a.res = r
		resolvers.add(a)
		return nil
	})
	c.OnShutdown(func() error {
		resolvers.remove(a)
		if a.res != nil {
			a.res.Close()
		}
		return nil
	})
	config.AddPlugin(func(next plugin.Handler) plugin.Handler {
		a.Next = next
		return a
	})
	return nil
}

// parseAlias reads
//
//	alias {
//	    upstream ADDRESS...
//	    timeout DURATION
//	    pool N
//	    queue N
//	    serve_stale DURATION
//	    on_worker
//	}
func parseAlias(c *caddy.Controller) (*Alias, error) {
	a := &Alias{}
	a.cfg.Observe = observe(a)
	for c.Next() {
		if len(c.RemainingArgs()) != 0 {
			return nil, c.ArgErr()
		}
		for c.NextBlock() {
			switch v := c.Val(); v {
			case "upstream":
				args := c.RemainingArgs()
				if len(args) == 0 {
					return nil, c.ArgErr()
				}
				hosts, err := parse.HostPortOrFile(args...)
				if err != nil {
					return nil, err
				}
				a.cfg.Upstreams = append(a.cfg.Upstreams, hosts...)
			case "timeout", "serve_stale":
				d, err := duration(c)
				if err != nil {
					return nil, err
				}
				if v == "timeout" {
					a.cfg.Timeout = d
				} else {
					a.cfg.ServeStale = d
				}
			case "pool", "queue":
				n, err := count(c)
				if err != nil {
					return nil, err
				}
				if v == "pool" {
					a.cfg.Pool = n
				} else {
					a.cfg.Queue = n
				}
			case "on_worker":
				if len(c.RemainingArgs()) != 0 {
					return nil, c.ArgErr()
				}
				a.onWorker = true
			default:
				return nil, c.Errf("unknown property %q", v)
			}
		}
	}
	if len(a.cfg.Upstreams) == 0 {
		return nil, c.Err("alias needs at least one upstream")
	}
	return a, nil
}

func duration(c *caddy.Controller) (time.Duration, error) {
	args := c.RemainingArgs()
	if len(args) != 1 {
		return 0, c.ArgErr()
	}
	d, err := time.ParseDuration(args[0])
	if err != nil || d <= 0 {
		return 0, c.Errf("%s: want a positive duration, got %q", c.Val(), args[0])
	}
	return d, nil
}

func count(c *caddy.Controller) (int, error) {
	args := c.RemainingArgs()
	if len(args) != 1 {
		return 0, c.ArgErr()
	}
	n, err := strconv.Atoi(args[0])
	if err != nil || n <= 0 {
		return 0, c.Errf("%s: want a positive number, got %q", c.Val(), args[0])
	}
	return n, nil
}
