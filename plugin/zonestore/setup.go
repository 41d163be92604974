// Package zonestore is the CoreDNS adapter of the zonestore library: it reads
// the Corefile, loads and reloads zone files into a zonestore.Store, and
// answers queries from it. Its syntax is stock `file`'s.
package zonestore

import (
	"errors"
	"os"
	"path/filepath"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"

	"github.com/ontimedns/ontime/zonestore"
)

const pluginName = "zonestore"

var log = clog.NewWithPlugin(pluginName)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	h, sources, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	stop := make(chan struct{})
	c.OnStartup(func() error {
		for _, src := range sources {
			go src.watch(h.store, stop)
		}
		return nil
	})
	c.OnShutdown(func() error {
		close(stop)
		return nil
	})
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		h.Next = next
		return h
	})
	return nil
}

// parse reads `zonestore DBFILE [ZONES...] { reload DURATION ... }` blocks,
// exactly as stock file reads `file`, and loads each zone once.
func parse(c *caddy.Controller) (*Handler, []*source, error) {
	h := &Handler{store: zonestore.NewStore()}
	var sources []*source
	config := dnsserver.GetConfig(c)

	for c.Next() {
		if !c.NextArg() {
			return nil, nil, c.ArgErr()
		}
		fileName := c.Val()
		origins := plugin.OriginsFromArgsOrServerBlock(c.RemainingArgs(), c.ServerBlockKeys)
		if !filepath.IsAbs(fileName) && config.Root != "" {
			fileName = filepath.Join(config.Root, fileName)
		}

		reload := time.Minute
		byMtime := false
		for c.NextBlock() {
			switch c.Val() {
			case "fallthrough":
				h.Fall.SetZonesFromArgs(c.RemainingArgs())
			case "reload":
				t := c.RemainingArgs()
				if len(t) < 1 {
					return nil, nil, errors.New("reload duration value is expected")
				}
				d, err := time.ParseDuration(t[0])
				if err != nil {
					return nil, nil, err
				}
				if d < 0 {
					return nil, nil, c.Errf("reload duration %q must not be negative", t[0])
				}
				reload = d
			case "reload_by_mtime":
				byMtime = true
			case "upstream":
				c.RemainingArgs() // accepted and ignored, as stock file does
			default:
				return nil, nil, c.Errf("unknown property '%s'", c.Val())
			}
		}

		for _, origin := range origins {
			src := &source{origin: origin, file: filepath.Clean(fileName), interval: reload, byMtime: byMtime}
			if err := src.load(h.store); err != nil {
				var pathErr *os.PathError
				if errors.As(err, &pathErr) && reload != 0 {
					// As stock file: a missing file is retried, a broken one is fatal.
					log.Warningf("Failed to open %q: trying again in %s", fileName, reload)
				} else {
					return nil, nil, err
				}
			}
			h.origins = append(h.origins, origin)
			sources = append(sources, src)
		}
	}
	return h, sources, nil
}
