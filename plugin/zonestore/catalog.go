package zonestore

import (
	"fmt"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/gcpace"
	"github.com/ontimedns/ontime/zonestore"
	"github.com/ontimedns/ontime/zonestore/secondary"
)

// catalogs are the member zones each catalog zone of the block named last.
type catalogs struct {
	mu       sync.Mutex
	members  map[string]map[string]bool // catalog -> member origins
	failures sync.Map                   // catalog -> *failureLog
}

// failuresOf returns the log of the catalog's members' failures.
func (c *catalogs) failuresOf(catalog string) *failureLog {
	f, _ := c.failures.LoadOrStore(catalog, &failureLog{catalog: catalog, now: time.Now, errorf: log.Errorf})
	return f.(*failureLog)
}

// failureLog logs a catalog's members' failures: the first at once, then
// at most a line a minute, which counts those since the last line and
// says the latest. Behind a primary gone, 100,000 members each logged a
// line at every retry: 28 MB of log in the first seconds of a restart
// (bench/zones.sh's restart row). Each failure is still counted
// (load_failures_total, under the catalog's label).
type failureLog struct {
	catalog string
	now     func() time.Time
	errorf  func(format string, args ...any)

	mu   sync.Mutex
	last time.Time // of the last line logged
	n    int       // failures since, not logged
}

func (f *failureLog) logf(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	now := f.now()
	if !f.last.IsZero() && now.Sub(f.last) < time.Minute {
		f.n++
		return
	}
	line := fmt.Sprintf(format, args...)
	if f.n > 0 {
		line = fmt.Sprintf("Catalog zone %q: %d more member failures since %s; the latest: %s", f.catalog, f.n+1, f.last.UTC().Format(time.RFC3339), line)
	}
	f.errorf("%s", line)
	f.last, f.n = now, 0
}

// addCatalog adds a catalog zone (RFC 9432), as Knot and CoreDNS's
// secondary consume them: it is transferred and refreshed like a
// secondary zone, into a store of its own (it is not served), and every
// version of it says which zones the block serves as secondaries of the
// catalog's primaries: members it adds are transferred, members it drops
// stop being served. A fleet of secondaries learns new zones from its
// primary without a configuration change.
func (h *Handler) addCatalog(cfg secondary.Config, store storage) {
	origin, settings := cfg.Origin, memberSettings(cfg)
	cfg.Store, cfg.File = zonestore.NewStore(), store.file(origin)
	cfg.Logf = log.Warningf
	cfg.Events = transferEvents(origin, func(kind string, err error) {
		outcome := "keeping its members"
		if kind == secondary.Saved {
			outcome = "still used"
		}
		log.Errorf("%s of catalog zone %q failed, %s: %v", eventName(kind), origin, outcome, err)
	}, func(_ string, z *zonestore.Zone) {
		h.applyCatalog(origin, z, settings, store)
	})
	h.secs.put(map[string]*member{origin: {zone: secondary.New(cfg), catalog: true, label: origin}})
}

// memberSettings are what a catalog's members take from it: its
// primaries, key, verification and limits.
func memberSettings(catalog secondary.Config) secondary.Config {
	return secondary.Config{Primaries: catalog.Primaries, TSIG: catalog.TSIG, Verify: catalog.Verify, Limits: catalog.Limits}
}

// applyCatalog makes the block's member zones those the catalog names,
// each transferred as the catalog's settings say, and saved in store.
func (h *Handler) applyCatalog(catalog string, z *zonestore.Zone, settings secondary.Config, store storage) {
	want, err := catalogMembers(z)
	if err != nil {
		loadFailures.WithLabelValues(catalog).Inc()
		log.Errorf("Catalog zone %q serial %d not used, keeping its members: %v", catalog, z.Serial(), err)
		return
	}
	h.cats.mu.Lock()
	defer h.cats.mu.Unlock()
	if h.cats.members == nil {
		h.cats.members = map[string]map[string]bool{}
	}
	have := h.cats.members[catalog]
	changes := map[string]*member{}
	var added, gone []string
	var zones []*secondary.Zone
	for o := range want {
		if have[o] {
			continue
		}
		if h.secs.get(o) != nil || h.store.Get(o) != nil {
			log.Warningf("Catalog zone %q names %q, which the block already serves otherwise: ignored", catalog, o)
			delete(want, o)
			continue
		}
		m := h.catalogMember(catalog, settings, store, o)
		changes[o], added, zones = m, append(added, o), append(zones, m.zone)
	}
	for o := range have {
		if !want[o] {
			changes[o] = nil
			gone = append(gone, o)
		}
	}
	// The members' places in the store, made in one copy of its index, not
	// one each as their first transfers end; and taken out so.
	h.store.Reserve(added)
	bulkTransfers(zones)
	h.secs.put(changes)
	h.store.RemoveAll(gone)
	for _, o := range gone {
		h.removed(o)
		store.drop(o)
	}
	logMembers(catalog, "added", added)
	logMembers(catalog, "removed", gone)
	h.cats.members[catalog] = want
	catalogMembersGauge.WithLabelValues(catalog).Set(float64(len(want)))
}

// catalogMembers reads the member zones of a catalog zone: the targets of
// the PTR records at <unique-N>.zones.<catalog> (RFC 9432 section 4.1),
// once its version.<catalog> TXT says "2"; a catalog of another version,
// or none, is not used (section 4.2).
func catalogMembers(z *zonestore.Zone) (map[string]bool, error) {
	origin := z.Origin()
	zones := "zones." + origin
	version := ""
	members := map[string]bool{}
	z.Walk(func(rrs []dns.RR) bool {
		for _, rr := range rrs {
			h := rr.Header()
			owner := strings.ToLower(h.Name)
			switch r := rr.(type) {
			case *dns.TXT:
				if owner == "version."+origin && len(r.Txt) == 1 {
					version = r.Txt[0]
				}
			case *dns.PTR:
				if strings.HasSuffix(owner, "."+zones) && dns.CountLabel(owner) == dns.CountLabel(zones)+1 {
					members[dns.CanonicalName(r.Ptr)] = true
				}
			}
		}
		return true
	})
	if version != "2" {
		return nil, fmt.Errorf("catalog version %q, want \"2\" (RFC 9432)", version)
	}
	return members, nil
}

// keepMembers makes members, which the catalog named under the previous
// configuration (a Corefile reload), the catalog's members again: their
// zones, still in the store, are refreshed from the catalog's primaries.
func (h *Handler) keepMembers(catalog secondary.Config, store storage, members []string) {
	if len(members) == 0 {
		return
	}
	h.cats.mu.Lock()
	defer h.cats.mu.Unlock()
	if h.cats.members == nil {
		h.cats.members = map[string]map[string]bool{}
	}
	have := map[string]bool{}
	changes := map[string]*member{}
	settings := memberSettings(catalog)
	for _, o := range members {
		changes[o] = h.catalogMember(catalog.Origin, settings, store, o)
		have[o] = true
	}
	h.secs.put(changes)
	h.cats.members[catalog.Origin] = have
}

// catalogMember makes the member zone origin of catalog, transferred as
// the catalog's settings say and saved in store.
func (h *Handler) catalogMember(catalog string, settings secondary.Config, store storage, origin string) *member {
	cfg := settings
	cfg.Origin, cfg.Store, cfg.File = origin, h.store, store.file(origin)
	return h.secondaryMember(cfg, catalog)
}

// logMembers logs the member zones a catalog added or removed: each by
// name where they are few, their count where a catalog brought many.
func logMembers(catalog, what string, origins []string) {
	if len(origins) > 10 {
		log.Infof("Catalog zone %q: %d member zones %s", catalog, len(origins), what)
		return
	}
	for _, o := range origins {
		log.Infof("Catalog zone %q: member zone %q %s", catalog, o, what)
	}
}

// bulkTransfers paces the collector while a catalog's many new members
// (bulkLoad or more: its first version, read at start) are transferred, as
// a directory's first scan is paced: it runs often meanwhile
// (bulkGCPercent), so that the transfers' garbage frees room the zones
// then fill, where the headroom the server keeps for queries
// (internal/gcpace) would fill with it first. A secondary of 10,000 small
// zones was 427 MB resident, 3.6 kB a record, where the same zones read
// from files took 0.4 kB (bench/zones.sh). The pace is given back once
// every member is transferred, or none was for bulkStall, and the
// garbage left is given back to the system then, as after a directory's
// bulk load.
func bulkTransfers(zones []*secondary.Zone) {
	if len(zones) < bulkLoad {
		return
	}
	release := gcpace.Hold()
	old := debug.SetGCPercent(bulkGCPercent)
	go func() {
		defer release()
		defer debug.SetGCPercent(old)
		defer debug.FreeOSMemory()
		// Each look drops the zones it finds loaded, so that the looks
		// cost less as the transfers go: looking at 100,000 zones every
		// 100 ms took 28% of the CPU that transferred them.
		for since := time.Now(); len(zones) > 0 && time.Since(since) < bulkStall; {
			time.Sleep(500 * time.Millisecond)
			left := zones[:0]
			for _, z := range zones {
				if !z.Loaded() {
					left = append(left, z)
				}
			}
			if len(left) < len(zones) {
				since = time.Now()
			}
			zones = left
		}
	}()
}

// bulkStall is how long bulk transfers may go without one finishing
// before the collector's pace is given back.
const bulkStall = 10 * time.Second
