// Package rrl is the rrl plugin: response rate limiting (library rrl) on
// the UDP responses of the rest of the chain.
package rrl

import (
	"encoding/hex"
	"net/netip"
	"strconv"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"

	"github.com/ontimedns/ontime/plugin/shardmetrics"
	"github.com/ontimedns/ontime/plugin/stockerrors"
	"github.com/ontimedns/ontime/rrl"
)

const pluginName = "rrl"

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	cfg, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	h := &RRL{l: rrl.New(cfg.Config), cookies: rrl.NewCookies(cfg.secret)}
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		// The stock prometheus plugin, counting per core; the stock errors
		// plugin, wrapping no writer (plugin/stockerrors).
		h.Next = shardmetrics.Wrap(stockerrors.Wrap(next))
		return h
	})
	return nil
}

// parse reads
//
//	rrl {
//	    rate N            responses a second per client network and answer (200)
//	    slip N            every Nth limited response sent truncated; 0: never (2)
//	    ipv4-prefix N     client network length, IPv4 (24)
//	    ipv6-prefix N     client network length, IPv6 (56)
//	    table N           buckets in the table, fixed (65536)
//	    exempt PREFIX...  networks never limited
//	    cookie-secret HEX the 16-octet secret of server cookies, shared by
//	                      the servers of one anycast address (random)
//	}
//
// where every setting, and the block, may be left out.
// config is the limiter's settings and the cookies' secret.
type config struct {
	rrl.Config
	secret []byte // nil: a random one
}

func parse(c *caddy.Controller) (config, error) {
	var cfg config
	i := 0
	for c.Next() {
		if i > 0 {
			return cfg, plugin.ErrOnce
		}
		i++
		if len(c.RemainingArgs()) > 0 {
			return cfg, c.ArgErr()
		}
		for c.NextBlock() {
			key := c.Val()
			args := c.RemainingArgs()
			if key == "exempt" {
				if len(args) == 0 {
					return cfg, c.Errf("exempt takes one network or more")
				}
				for _, a := range args {
					p, err := netip.ParsePrefix(a)
					if err != nil {
						addr, aerr := netip.ParseAddr(a)
						if aerr != nil {
							return cfg, c.Errf("exempt %q: want a network (192.0.2.0/24) or an address", a)
						}
						p = netip.PrefixFrom(addr, addr.BitLen())
					}
					cfg.Exempt = append(cfg.Exempt, p.Masked())
				}
				continue
			}
			if len(args) != 1 {
				return cfg, c.Errf("%s takes one value", key)
			}
			if key == "cookie-secret" {
				b, err := hex.DecodeString(args[0])
				if err != nil || len(b) != 16 {
					return cfg, c.Errf("cookie-secret: want 16 octets in hex (32 digits)")
				}
				cfg.secret = b
				continue
			}
			n, err := strconv.Atoi(args[0])
			if err != nil {
				return cfg, c.Errf("%s %q: want a whole number", key, args[0])
			}
			switch key {
			case "rate", "table":
				if n <= 0 {
					return cfg, c.Errf("%s %d: want a positive number", key, n)
				}
				*map[string]*int{"rate": &cfg.Rate, "table": &cfg.Buckets}[key] = n
			case "slip":
				if n < 0 {
					return cfg, c.Errf("slip %d: want 0 (never) or more", n)
				}
				cfg.Slip = n
				if n == 0 {
					cfg.Slip = -1
				}
			case "ipv4-prefix", "ipv6-prefix":
				limit := 32
				if key == "ipv6-prefix" {
					limit = 128
				}
				if n <= 0 || n > limit {
					return cfg, c.Errf("%s %d: want 1 to %d", key, n, limit)
				}
				*map[string]*int{"ipv4-prefix": &cfg.IPv4Prefix, "ipv6-prefix": &cfg.IPv6Prefix}[key] = n
			default:
				return cfg, c.Errf("unknown property %q", key)
			}
		}
	}
	return cfg, nil
}
