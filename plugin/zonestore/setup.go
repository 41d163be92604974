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
	h, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	stop := make(chan struct{})
	c.OnStartup(func() error {
		for _, src := range h.sources {
			go src.watch(h.store, stop)
		}
		for _, d := range h.dirs {
			go d.watch(h.store, stop)
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
// exactly as stock file reads `file`, and loads each zone once; and
// `zonestore [ZONES...] { directory DIR [REGEXP TEMPLATE] ... }`, a
// directory of zone files as the auto plugin reads it, scanned once.
func parse(c *caddy.Controller) (*Handler, error) {
	h := &Handler{store: zonestore.NewStore()}
	config := dnsserver.GetConfig(c)

	for c.Next() {
		args := c.RemainingArgs()
		reload := time.Minute
		byMtime := false
		type dirSpec struct{ dir, re, tmpl string }
		var dirs []dirSpec
		for c.NextBlock() {
			switch c.Val() {
			case "fallthrough":
				h.Fall.SetZonesFromArgs(c.RemainingArgs())
			case "reload":
				t := c.RemainingArgs()
				if len(t) < 1 {
					return nil, errors.New("reload duration value is expected")
				}
				d, err := time.ParseDuration(t[0])
				if err != nil {
					return nil, err
				}
				if d < 0 {
					return nil, c.Errf("reload duration %q must not be negative", t[0])
				}
				reload = d
			case "reload_by_mtime":
				byMtime = true
			case "upstream":
				c.RemainingArgs() // accepted and ignored, as stock file does
			case "directory": // directory DIR [REGEXP TEMPLATE], as auto reads it
				t := c.RemainingArgs()
				if len(t) != 1 && len(t) != 3 {
					return nil, c.ArgErr()
				}
				dir := t[0]
				if !filepath.IsAbs(dir) && config.Root != "" {
					dir = filepath.Join(config.Root, dir)
				}
				if _, err := os.Stat(dir); err != nil {
					if !os.IsNotExist(err) {
						return nil, c.Errf("unable to access directory %q: %v", dir, err)
					}
					log.Warningf("Directory does not exist: %s", dir)
				}
				spec := dirSpec{dir: dir}
				if len(t) == 3 {
					spec.re, spec.tmpl = t[1], t[2]
				}
				dirs = append(dirs, spec)
			default:
				return nil, c.Errf("unknown property '%s'", c.Val())
			}
		}
		// With a directory, the arguments are zones (as auto's); without,
		// the first is the file (as file's).
		if len(dirs) > 0 {
			origins := plugin.OriginsFromArgsOrServerBlock(args, c.ServerBlockKeys)
			for _, spec := range dirs {
				d, err := newDirectory(spec.dir, spec.re, spec.tmpl, origins)
				if err != nil {
					return nil, c.Err(err.Error())
				}
				d.interval, d.byMtime = reload, byMtime
				d.scan(h.store)
				h.dirs = append(h.dirs, d)
			}
			continue
		}
		if len(args) == 0 {
			return nil, c.Err("zonestore needs a zone file, or a directory in its block")
		}
		fileName := args[0]
		if !filepath.IsAbs(fileName) && config.Root != "" {
			fileName = filepath.Join(config.Root, fileName)
		}
		origins := plugin.OriginsFromArgsOrServerBlock(args[1:], c.ServerBlockKeys)
		for _, origin := range origins {
			src := &source{origin: origin, file: filepath.Clean(fileName), interval: reload, byMtime: byMtime}
			if err := src.load(h.store); err != nil {
				var pathErr *os.PathError
				if errors.As(err, &pathErr) && reload != 0 {
					// As stock file: a missing file is retried, a broken one is fatal.
					log.Warningf("Failed to open %q: trying again in %s", fileName, reload)
				} else {
					return nil, err
				}
			}
			h.origins = append(h.origins, origin)
			h.sources = append(h.sources, src)
		}
	}
	return h, nil
}
