package zonestore

import (
	"strings"
	"sync"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"

	"github.com/ontimedns/ontime/zonestore"
)

// A Corefile reload (the reload plugin) sets every plugin up again, in a
// new instance that takes the listeners over from the old one. What one
// server block's zonestore held is carried to the next configuration of
// the same block: its store, with every zone still being served, and its
// sources, whose file stamps say which files changed since they were
// read. A zone whose source did not change is not parsed again, and the
// new servers answer from the first query, from the same versions.
type carried struct {
	owner   *Handler
	store   *zonestore.Store
	history *history
	sources []*source
	dirs    []*directory
	cats    *catalogs // the member zones each catalog named last
}

var carry = struct {
	sync.Mutex
	blocks map[string]*carried
}{blocks: map[string]*carried{}}

// blockKey names a server block across configurations: where it listens
// and the zones it serves.
func blockKey(c *caddy.Controller) string {
	cfg := dnsserver.GetConfig(c)
	return strings.Join(cfg.ListenHosts, ",") + "|" + cfg.Port + "|" + strings.Join(c.ServerBlockKeys, ",")
}

// carriedFor returns what the block's previous configuration left, if any.
func carriedFor(key string) *carried {
	carry.Lock()
	defer carry.Unlock()
	return carry.blocks[key]
}

// leave records what h holds for the block's next configuration.
func (h *Handler) leave(key string) {
	carry.Lock()
	carry.blocks[key] = &carried{owner: h, store: h.store, history: h.history, sources: h.sources, dirs: h.dirs, cats: &h.cats}
	carry.Unlock()
}

// abandon forgets the block, at shutdown, unless a newer configuration of
// it has taken its place (a reload sets up the new one first).
func (h *Handler) abandon(key string) {
	carry.Lock()
	if c := carry.blocks[key]; c != nil && c.owner == h {
		delete(carry.blocks, key)
	}
	carry.Unlock()
}

// seenBefore returns the stamp of the file as the previous configuration
// last read it for origin.
func (c *carried) seenBefore(file, origin string) (fileStamp, bool) {
	if c == nil {
		return fileStamp{}, false
	}
	for _, s := range c.sources {
		if s.file == file && s.origin == origin {
			return s.seen, true
		}
	}
	return fileStamp{}, false
}

// directoryBefore returns the previous configuration's reading of the same
// directory, files and stamps, to scan from.
func (c *carried) directoryBefore(d *directory) map[string]*source {
	if c == nil {
		return nil
	}
	for _, old := range c.dirs {
		if old.dir == d.dir && old.re.String() == d.re.String() && old.template == d.template {
			old.mu.Lock()
			defer old.mu.Unlock()
			files := make(map[string]*source, len(old.files))
			for o, s := range old.files {
				cp := *s
				cp.published = d.published
				files[o] = &cp
			}
			return files
		}
	}
	return nil
}

// membersBefore returns the member zones the catalog named last, under
// the previous configuration, with their member nodes' labels: they are
// served again at once, and the catalog, transferred anew, then adds,
// drops or resets from there.
func (c *carried) membersBefore(catalog string) map[string]string {
	if c == nil || c.cats == nil {
		return nil
	}
	c.cats.mu.Lock()
	defer c.cats.mu.Unlock()
	out := map[string]string{}
	for o, label := range c.cats.members[catalog] {
		out[o] = label
	}
	return out
}

// dropUnconfigured removes from a carried store the zones the new
// configuration no longer serves.
func (h *Handler) dropUnconfigured() {
	keep := map[string]bool{}
	for _, o := range h.origins {
		keep[strings.ToLower(o)] = true
	}
	for _, d := range h.dirs {
		for o := range *d.current.Load() {
			keep[o] = true
		}
	}
	for o := range h.secs.load() {
		keep[o] = true
	}
	if h.catalog != nil {
		keep[h.catalog.origin] = true
	}
	var gone []string
	for _, o := range h.store.Origins() {
		if !keep[o] {
			gone = append(gone, o)
		}
	}
	h.store.RemoveAll(gone)
	for _, o := range gone {
		h.removed(o)
	}
}

// forgetCatalogs drops the members gauge of each catalog the previous
// configuration had and h has not.
func (c *carried) forgetCatalogs(h *Handler) {
	if c == nil || c.cats == nil {
		return
	}
	c.cats.mu.Lock()
	defer c.cats.mu.Unlock()
	for catalog := range c.cats.members {
		if m := h.secs.get(catalog); m == nil || !m.catalog {
			catalogMembersGauge.DeleteLabelValues(catalog)
		}
	}
}
