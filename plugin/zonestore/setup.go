// Package zonestore is the CoreDNS adapter of the zonestore library: it reads
// the Corefile, loads and reloads zone files into a zonestore.Store, and
// answers queries from it. Its syntax is stock `file`'s.
package zonestore

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	pkgparse "github.com/coredns/coredns/plugin/pkg/parse"
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
	"github.com/ontimedns/ontime/zonestore/secondary"
)

const pluginName = "zonestore"

var log = clog.NewWithPlugin(pluginName)

func init() { plugin.Register(pluginName, setup) }

func setup(c *caddy.Controller) error {
	h, err := parse(c)
	if err != nil {
		return plugin.Error(pluginName, err)
	}
	key := blockKey(c)
	h.leave(key)
	stop := make(chan struct{})
	c.OnFirstStartup(collapseHeap) // after every block's setup, before the servers start
	c.OnStartup(func() error {
		// NOTIFY the transfer plugin's secondaries of every version
		// published from now on, and of those loaded already (as file does).
		if x, ok := dnsserver.GetConfig(c).Handler("transfer").(*transfer.Transfer); ok {
			h.xfer.Store(x)
			for _, o := range h.origins {
				go x.Notify(dns.CanonicalName(o))
			}
		}
		if h.catalog != nil {
			h.catalog.start()
		}
		for _, src := range h.sources {
			go src.watch(h.store, stop)
		}
		for _, d := range h.dirs {
			go d.watch(h.store, stop)
		}
		h.secs.start()
		scraped.track(h)
		go h.watchSignatures(stop)
		return nil
	})
	c.OnShutdown(func() error {
		close(stop)
		scraped.untrack(h)
		h.secs.stopAll()
		h.abandon(key)
		return nil
	})
	dnsserver.GetConfig(c).AddPlugin(func(next plugin.Handler) plugin.Handler {
		h.Next = next
		return h
	})
	return nil
}

// parse reads `zonestore DBFILE [ZONES...] { reload DURATION ... }` blocks,
// exactly as stock file reads `file`, and loads each zone once;
// `zonestore [ZONES...] { directory DIR [REGEXP TEMPLATE] ... }`, a
// directory of zone files as the auto plugin reads it, scanned once; and
// `secondary ZONE PRIMARY...` lines (with `tsig NAME SECRET [ALGORITHM]`),
// zones transferred from primaries once the server starts.
func parse(c *caddy.Controller) (*Handler, error) {
	h := &Handler{store: zonestore.NewStore(), history: &history{}}
	h.secs.workers = transfersDefault
	config := dnsserver.GetConfig(c)
	// After a Corefile reload: the block's store, and what its sources read.
	prev := carriedFor(blockKey(c))
	if prev != nil {
		h.store, h.history = prev.store, prev.history
	}

	replay := replaySize
	for c.Next() {
		args := c.RemainingArgs()
		reload := time.Minute
		byMtime := false
		var dg digests
		type dirSpec struct{ dir, re, tmpl string }
		var dirs []dirSpec
		var secs, cats []secondary.Config
		var tsig *secondary.TSIG
		var store storage
		transfers := false
		limits, limited := limitsDefault, false
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
			case "zonemd_verify": // publish only versions whose digest verifies (ZONEMD, RFC 8976)
				if len(c.RemainingArgs()) != 0 {
					return nil, c.ArgErr()
				}
				dg.verify = true
			case "zonemd_generate": // zonemd_generate [sha384|sha512]: a digest made for each version read from a file
				t := c.RemainingArgs()
				hashes := map[string]uint8{"sha384": zonestore.ZONEMDSHA384, "sha512": zonestore.ZONEMDSHA512}
				switch {
				case len(t) == 0:
					dg.generate = zonestore.ZONEMDSHA384
				case len(t) == 1 && hashes[strings.ToLower(t[0])] != 0:
					dg.generate = hashes[strings.ToLower(t[0])]
				default:
					return nil, c.Errf("zonemd_generate %v: want sha384 or sha512", t)
				}
			case "replay": // replay SIZE: answers the server keeps packed; 0 keeps none
				t := c.RemainingArgs()
				if len(t) != 1 {
					return nil, c.ArgErr()
				}
				n, err := strconv.Atoi(t[0])
				if err != nil || n < 0 || n > 1<<24 {
					return nil, c.Errf("replay %q: a number of answers from 0 to %d is expected", t[0], 1<<24)
				}
				replay = n
			case "upstream":
				c.RemainingArgs() // accepted and ignored, as stock file does
			case "generate_catalog": // generate_catalog ZONE: a catalog zone (RFC 9432) of the block's files' and directories' zones
				t := c.RemainingArgs()
				if len(t) != 1 {
					return nil, c.ArgErr()
				}
				if _, ok := dns.IsDomainName(t[0]); !ok {
					return nil, c.Errf("generate_catalog: %q is not a zone name", t[0])
				}
				if h.catalog != nil {
					return nil, c.Errf("generate_catalog %s: the block generates %s already", t[0], h.catalog.origin)
				}
				origin := dns.CanonicalName(t[0])
				if plugin.Zones(plugin.OriginsFromArgsOrServerBlock(nil, c.ServerBlockKeys)).Matches(origin) == "" {
					return nil, c.Errf("generate_catalog %s: not within the server block's zones", t[0])
				}
				h.catalog = &producer{origin: origin, h: h}
			case "directory": // directory DIR [REGEXP TEMPLATE], as auto reads it
				t := c.RemainingArgs()
				if len(t) != 1 && len(t) != 3 {
					return nil, c.ArgErr()
				}
				dir := underRoot(config.Root, t[0])
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
			case "secondary", "catalog": // secondary ZONE PRIMARY..., catalog ZONE PRIMARY...
				kind := c.Val()
				t := c.RemainingArgs()
				if len(t) < 2 {
					return nil, c.ArgErr()
				}
				primaries, err := pkgparse.HostPortOrFile(t[1:]...)
				if err != nil {
					return nil, err
				}
				for _, p := range primaries {
					host, port, err := net.SplitHostPort(p)
					if _, perr := strconv.ParseUint(port, 10, 16); err != nil || perr != nil || net.ParseIP(host) == nil {
						return nil, c.Errf("secondary %s: primary %q is not IP:PORT", t[0], p)
					}
				}
				if _, ok := dns.IsDomainName(t[0]); !ok {
					return nil, c.Errf("secondary: %q is not a zone name", t[0])
				}
				cfg := secondary.Config{Origin: dns.CanonicalName(t[0]), Primaries: primaries}
				if kind == "catalog" {
					cats = append(cats, cfg)
				} else {
					secs = append(secs, cfg)
				}
			case "storage": // storage DIR: the secondaries' saved copies
				t := c.RemainingArgs()
				if len(t) != 1 {
					return nil, c.ArgErr()
				}
				dir := underRoot(config.Root, t[0])
				s, err := openStorage(dir)
				if err != nil {
					return nil, c.Errf("storage %q: %v", dir, err)
				}
				store = s
			case "transfers": // transfers N: refreshes of the block's secondary zones at once
				t := c.RemainingArgs()
				if len(t) != 1 {
					return nil, c.ArgErr()
				}
				n, err := strconv.Atoi(t[0])
				if err != nil || n < 1 || n > 1000 {
					return nil, c.Errf("transfers %q: a number of refreshes at once from 1 to 1000 is expected", t[0])
				}
				h.secs.workers, transfers = n, true
			case "refresh", "retry", "expire": // refresh MIN [MAX]: the SOA's timer held within
				name := c.Val()
				b, err := parseBounds(c.RemainingArgs())
				if err != nil {
					return nil, c.Errf("%s: %v", name, err)
				}
				switch name {
				case "refresh":
					limits.Refresh = b
				case "retry":
					limits.Retry = b
				default:
					limits.Expire = b
				}
				limited = true
			case "max_records": // max_records N: the most records a transferred zone may have
				t := c.RemainingArgs()
				if len(t) != 1 {
					return nil, c.ArgErr()
				}
				n, err := strconv.Atoi(t[0])
				if err != nil || n < 0 {
					return nil, c.Errf("max_records %q: a number of records is expected (0: no limit)", t[0])
				}
				limits.MaxRecords, limited = n, true
			case "max_transfer_time": // max_transfer_time DURATION: the longest a transfer may take
				t := c.RemainingArgs()
				if len(t) != 1 {
					return nil, c.ArgErr()
				}
				d, err := time.ParseDuration(t[0])
				if err != nil || d < 0 {
					return nil, c.Errf("max_transfer_time %q: a duration is expected (30m, 2h; 0: no limit)", t[0])
				}
				limits.TransferTime, limited = d, true
			case "tsig": // tsig NAME SECRET [ALGORITHM], for the secondaries' transfers
				t := c.RemainingArgs()
				if len(t) != 2 && len(t) != 3 {
					return nil, c.ArgErr()
				}
				tsig = &secondary.TSIG{Name: dns.CanonicalName(t[0]), Secret: t[1]}
				if len(t) == 3 {
					tsig.Algorithm = dns.CanonicalName(t[2])
				}
			default:
				return nil, c.Errf("unknown property '%s'", c.Val())
			}
		}
		var verifier func(*zonestore.Zone) error
		if dg.verify {
			verifier = (*zonestore.Zone).VerifyZONEMD
		}
		for _, cfg := range secs {
			cfg.TSIG, cfg.Store, cfg.Verify, cfg.File, cfg.Limits = tsig, h.store, verifier, store.file(cfg.Origin), limits
			h.addSecondary(cfg)
		}
		for _, cfg := range cats {
			cfg.TSIG, cfg.Verify, cfg.Limits = tsig, verifier, limits
			h.addCatalog(cfg, store)
			h.keepMembers(cfg, store, prev.membersBefore(cfg.Origin))
		}
		secs = append(secs, cats...)
		if tsig != nil && len(secs) == 0 {
			return nil, c.Err("tsig is for the secondary zones of the block, and it has none")
		}
		if store != "" && len(secs) == 0 {
			return nil, c.Err("storage is for the secondary and catalog zones of the block, and it has none")
		}
		if transfers && len(secs) == 0 {
			return nil, c.Err("transfers is for the secondary and catalog zones of the block, and it has none")
		}
		if limited && len(secs) == 0 {
			return nil, c.Err("refresh, retry, expire, max_records and max_transfer_time are for the secondary and catalog zones of the block, and it has none")
		}
		if tsig != nil {
			// The server's reader verifies a signed message before the
			// chain, with the secrets it is given: a NOTIFY from the
			// primaries must verify with this key (secondary.go).
			if s, ok := config.TsigSecret[tsig.Name]; ok && s != tsig.Secret {
				return nil, c.Errf("tsig %s: another secret for the key is set already (the tsig plugin?)", tsig.Name)
			}
			if config.TsigSecret == nil {
				config.TsigSecret = map[string]string{}
			}
			config.TsigSecret[tsig.Name] = tsig.Secret
		}
		// With a directory or secondaries, the arguments are zones (as
		// auto's); without, the first is the file (as file's).
		if len(secs) > 0 && len(dirs) == 0 {
			continue
		}
		if len(dirs) > 0 {
			origins := plugin.OriginsFromArgsOrServerBlock(args, c.ServerBlockKeys)
			for _, spec := range dirs {
				d, err := newDirectory(spec.dir, spec.re, spec.tmpl, origins)
				if err != nil {
					return nil, c.Err(err.Error())
				}
				d.interval, d.byMtime, d.digests = reload, byMtime, dg
				d.published, d.gone, d.afterScan = h.publishedQuietly, h.removed, h.updateCatalog
				if files := prev.directoryBefore(d); files != nil {
					d.files = files
				}
				d.scan(h.store)
				h.dirs = append(h.dirs, d)
			}
			continue
		}
		if len(args) == 0 {
			return nil, c.Err("zonestore needs a zone file, or a directory in its block")
		}
		fileName := underRoot(config.Root, args[0])
		origins := plugin.OriginsFromArgsOrServerBlock(args[1:], c.ServerBlockKeys)
		for _, origin := range origins {
			src := &source{origin: origin, file: filepath.Clean(fileName), interval: reload, byMtime: byMtime, digests: dg, published: h.publishedFile}
			src.seen, _ = prev.seenBefore(src.file, src.origin) // unchanged since: not parsed again
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
	if h.catalog != nil {
		if h.secs.get(h.catalog.origin) != nil || slices.ContainsFunc(h.origins, func(o string) bool { return dns.CanonicalName(o) == h.catalog.origin }) {
			return nil, c.Errf("generate_catalog %s: the block serves that zone otherwise", h.catalog.origin)
		}
		if len(h.origins) == 0 && len(h.dirs) == 0 {
			return nil, c.Err("generate_catalog names the block's zones from files and directories, and it has none")
		}
	}
	if prev != nil {
		h.dropUnconfigured()
		prev.forgetCatalogs(h)
	}
	if replay > 0 {
		h.replays = newReplays(replay)
	}
	return h, nil
}

// underRoot is path relative to the root plugin's directory, root, where
// it is relative and a root is set; as given otherwise.
func underRoot(root, path string) string {
	if !filepath.IsAbs(path) && root != "" {
		return filepath.Join(root, path)
	}
	return path
}
