// Package codel is the CoreDNS adapter of the codel library: UDP queries
// are handed to one bounded queue in front of long-lived workers, which run
// the rest of the plugin chain; CoDel drops the late ones, counted.
package codel

import (
	"runtime"
	"strconv"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/connlimit"
	"github.com/ontimedns/ontime/internal/serverlabel"
	"github.com/ontimedns/ontime/plugin/shardmetrics"
	"github.com/ontimedns/ontime/plugin/stockerrors"
)

const pluginName = "codel"

var log = clog.NewWithPlugin(pluginName)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	cfg, opts, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	config := dnsserver.GetConfig(c)
	h := &Codel{drop: opts.drop, socket: opts.socket, sockets: opts.sockets, ownTCP: opts.tcpListeners, server: serverlabel.Of(config)}
	cfg.Feed = h.feed
	if opts.socket {
		cfg.Local = func() codel.Local { return new(outbox) }
		cfg.Warm = warmTask
	}
	h.q = codel.New(cfg)
	h.now = h.q.Config().Clock
	queues.add(h)
	release := func() {}
	if opts.tcpConns > 0 { // the table needs a bound: 0 turns both limits off
		if !connlimit.Supported {
			log.Infof("TCP connections are not limited here: %s", "Linux only")
		} else if !opts.socket && anyAddress(config.ListenHosts) {
			// The policy that carries the limit wraps CoreDNS's UDP socket
			// too, and CoreDNS's reader would answer through the wrapper
			// from whichever address the kernel picks (tcp.go).
			log.Warningf("%s: TCP connections are not limited: socket off on every address", h.server)
		} else if release, err = limitTCP(config, h, opts.tcpPerClient, opts.tcpConns); err != nil {
			log.Warningf("TCP connections are not limited: %v", err)
			release = func() {}
		}
	}
	c.OnShutdown(func() error {
		release()
		h.stop()
		queues.remove(h)
		return nil
	})
	// Called once per UDP socket when the server starts: the moment the
	// socket exists. Chained with any decorator already set (shed's).
	prev := config.UDPDecorateWriterFunc
	config.UDPDecorateWriterFunc = func(s *dnsserver.Server) dns.DecorateWriter {
		h.attach(s)
		if prev != nil {
			return prev(s)
		}
		return nil
	}
	config.AddPlugin(func(next plugin.Handler) plugin.Handler {
		// The stock prometheus plugin, counting per core; the stock errors
		// plugin, wrapping no writer (plugin/stockerrors).
		h.Next = shardmetrics.Wrap(stockerrors.Wrap(next))
		return h
	})
	return nil
}

// dropSilent means a dropped query gets no answer at all.
const dropSilent = -1

// options are the Corefile settings that are the plugin's, not the queue's.
type options struct {
	drop         int  // rcode for dropped queries, or dropSilent
	socket       bool // read the UDP socket (default on)
	sockets      int  // sockets of codel's own on each UDP address (default GOMAXPROCS)
	tcpListeners bool // TCP listeners of codel's own, one a CPU (default on; tcplisten.go)
	tcpPerClient int  // open TCP connections per client (an IPv4 address, an IPv6 /64); 0: no limit per client
	tcpConns     int  // open TCP connections in all; 0: no limit at all
}

// The default TCP limits. A resolver needs one connection to a server at a
// time, a few when it falls back to TCP for many truncated answers at once
// (RFC 7766 asks clients to reuse one); 64 leaves room for a resolver farm
// behind one address. 16,384 open connections in all is 16,384 goroutines
// and descriptors, far below Go's raised descriptor limit, and 1,600 new
// ones a second held for the 10 s idle timeout.
const (
	defaultTCPPerClient = 64
	defaultTCPConns     = 16384
)

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
//	    fifo
//	    socket on|off
//	    sockets N
//	    tcp_listeners on|off
//	    tcp_per_client N
//	    tcp_conns N
//	}
//
// where every setting, and the block, may be left out.
func parse(c *caddy.Controller) (codel.Config, options, error) {
	var cfg codel.Config
	opts := options{drop: dropSilent, socket: true, sockets: runtime.GOMAXPROCS(0), tcpListeners: true, tcpPerClient: defaultTCPPerClient, tcpConns: defaultTCPConns}
	i := 0
	for c.Next() {
		if i > 0 {
			return cfg, opts, plugin.ErrOnce
		}
		i++
		if len(c.RemainingArgs()) > 0 {
			return cfg, opts, c.ArgErr()
		}
		for c.NextBlock() {
			key := c.Val()
			args := c.RemainingArgs()
			if key == "fifo" {
				if len(args) != 0 {
					return cfg, opts, c.ArgErr()
				}
				cfg.FIFO = true
				continue
			}
			if len(args) != 1 {
				return cfg, opts, c.Errf("%s takes one value", key)
			}
			v := args[0]
			switch key {
			case "target", "interval", "deadline":
				d, err := time.ParseDuration(v)
				if err != nil || d <= 0 {
					return cfg, opts, c.Errf("%s %q: want a positive duration", key, v)
				}
				*map[string]*time.Duration{"target": &cfg.Target, "interval": &cfg.Interval, "deadline": &cfg.Deadline}[key] = d
			case "workers", "max_workers", "queue", "sockets":
				n, err := strconv.Atoi(v)
				if err != nil || n <= 0 {
					return cfg, opts, c.Errf("%s %q: want a positive integer", key, v)
				}
				*map[string]*int{"workers": &cfg.Workers, "max_workers": &cfg.MaxWorkers, "queue": &cfg.Capacity, "sockets": &opts.sockets}[key] = n
			case "tcp_per_client", "tcp_conns":
				n, err := strconv.Atoi(v)
				if err != nil || n < 0 {
					return cfg, opts, c.Errf("%s %q: want a whole number, 0 for no limit", key, v)
				}
				*map[string]*int{"tcp_per_client": &opts.tcpPerClient, "tcp_conns": &opts.tcpConns}[key] = n
			case "drop":
				switch v {
				case "silent":
					opts.drop = dropSilent
				case "refused":
					opts.drop = dns.RcodeRefused
				case "servfail":
					opts.drop = dns.RcodeServerFailure
				default:
					return cfg, opts, c.Errf("drop %q: want silent, refused or servfail", v)
				}
			case "socket", "tcp_listeners":
				if v != "on" && v != "off" {
					return cfg, opts, c.Errf("%s %q: want on or off", key, v)
				}
				if key == "socket" {
					opts.socket = v == "on"
				} else {
					opts.tcpListeners = v == "on"
				}
			default:
				return cfg, opts, c.Errf("unknown property %q", key)
			}
		}
	}
	if cfg.Target != 0 && cfg.Interval != 0 && cfg.Target >= cfg.Interval {
		return cfg, opts, c.Errf("target %s must be shorter than interval %s", cfg.Target, cfg.Interval)
	}
	if cfg.Workers != 0 && cfg.MaxWorkers != 0 && cfg.MaxWorkers < cfg.Workers {
		return cfg, opts, c.Errf("max_workers %d is fewer than workers %d", cfg.MaxWorkers, cfg.Workers)
	}
	return cfg, opts, nil
}

// anyAddress says whether the server listens on every address (no bind,
// or a bind to 0.0.0.0 or ::).
func anyAddress(hosts []string) bool {
	for _, h := range hosts {
		if h == "" || h == "0.0.0.0" || h == "::" {
			return true
		}
	}
	return len(hosts) == 0
}
