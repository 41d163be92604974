// Package codel is the CoreDNS adapter of the codel library: UDP queries
// are handed to one bounded queue in front of long-lived workers, which run
// the rest of the plugin chain; CoDel drops the late ones, counted.
package codel

import (
	"net"
	"strconv"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/codel"
)

const pluginName = "codel"

var log = clog.NewWithPlugin(pluginName)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	cfg, drop, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	h := &Codel{q: codel.New(cfg), drop: drop}
	server := serverLabel(dnsserver.GetConfig(c))
	queues.add(h.q, server)
	c.OnShutdown(func() error {
		h.q.Close()
		queues.remove(h.q)
		return nil
	})
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		h.Next = next
		return h
	})
	return nil
}

// dropSilent means a dropped query gets no answer at all.
const dropSilent = -1

// parse reads
//
//	codel {
//	    target DURATION
//	    interval DURATION
//	    deadline DURATION
//	    workers N
//	    max_workers N
//	    queue N
//	    drop silent|refused|servfail
//	}
//
// where every setting, and the block, may be left out.
func parse(c *caddy.Controller) (codel.Config, int, error) {
	var cfg codel.Config
	drop := dropSilent
	i := 0
	for c.Next() {
		if i > 0 {
			return cfg, 0, plugin.ErrOnce
		}
		i++
		if len(c.RemainingArgs()) > 0 {
			return cfg, 0, c.ArgErr()
		}
		for c.NextBlock() {
			key := c.Val()
			args := c.RemainingArgs()
			if len(args) != 1 {
				return cfg, 0, c.Errf("%s takes one value", key)
			}
			v := args[0]
			switch key {
			case "target", "interval", "deadline":
				d, err := time.ParseDuration(v)
				if err != nil || d <= 0 {
					return cfg, 0, c.Errf("%s %q: want a positive duration", key, v)
				}
				*map[string]*time.Duration{"target": &cfg.Target, "interval": &cfg.Interval, "deadline": &cfg.Deadline}[key] = d
			case "workers", "max_workers", "queue":
				n, err := strconv.Atoi(v)
				if err != nil || n <= 0 {
					return cfg, 0, c.Errf("%s %q: want a positive integer", key, v)
				}
				*map[string]*int{"workers": &cfg.Workers, "max_workers": &cfg.MaxWorkers, "queue": &cfg.Capacity}[key] = n
			case "drop":
				switch v {
				case "silent":
					drop = dropSilent
				case "refused":
					drop = dns.RcodeRefused
				case "servfail":
					drop = dns.RcodeServerFailure
				default:
					return cfg, 0, c.Errf("drop %q: want silent, refused or servfail", v)
				}
			default:
				return cfg, 0, c.Errf("unknown property %q", key)
			}
		}
	}
	if cfg.Target != 0 && cfg.Interval != 0 && cfg.Target >= cfg.Interval {
		return cfg, 0, c.Errf("target %s must be shorter than interval %s", cfg.Target, cfg.Interval)
	}
	if cfg.Workers != 0 && cfg.MaxWorkers != 0 && cfg.MaxWorkers < cfg.Workers {
		return cfg, 0, c.Errf("max_workers %d is fewer than workers %d", cfg.MaxWorkers, cfg.Workers)
	}
	return cfg, drop, nil
}

// serverLabel names the server as CoreDNS's own metrics do ("dns://:53").
func serverLabel(cfg *dnsserver.Config) string {
	host := ""
	if len(cfg.ListenHosts) > 0 {
		host = cfg.ListenHosts[0]
	}
	return cfg.Transport + "://" + net.JoinHostPort(host, cfg.Port)
}
