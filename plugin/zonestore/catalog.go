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
	members  map[string]map[string]string // catalog -> member origin -> its member node's label
	coo      map[string]map[string]string // catalog -> member origin -> the catalog its coo property names
	failures sync.Map                     // catalog -> *failureLog
}

// init makes the maps, once: under mu.
func (c *catalogs) init() {
	if c.members == nil {
		c.members, c.coo = map[string]map[string]string{}, map[string]map[string]string{}
	}
}

// ownerOf returns the catalog other than catalog whose member origin is,
// if one is.
func (c *catalogs) ownerOf(origin, catalog string) string {
	for other, members := range c.members {
		if _, ok := members[origin]; ok && other != catalog {
			return other
		}
	}
	return ""
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
	origin, settings := cfg.Origin, h.memberSettings(cfg)
	cfg.Store, cfg.File = zonestore.NewStore(), store.file(origin)
	cfg.Logf = warnf
	cfg.Events = transferEvents(origin, func(_, kind string, err error) {
		outcome := "keeping its members"
		if kind == secondary.Saved {
			outcome = "still used"
		}
		log.Errorf("%s of catalog zone %q failed, %s: %v", eventName(kind), origin, outcome, err)
	}, func(_, _ string, z *zonestore.Zone) {
		h.applyCatalog(origin, z, settings, store)
	})
	h.secs.put(map[string]*member{origin: {zone: secondary.New(cfg), catalog: true, label: origin}})
}

// memberSettings are the settings a catalog's members share: its
// primaries, key, verification and limits, the block's store, and one
// Events (counted under the catalog's label) and Logf for all of them.
func (h *Handler) memberSettings(catalog secondary.Config) *secondary.Config {
	return secondary.Shared(secondary.Config{Primaries: catalog.Primaries, TSIG: catalog.TSIG, Verify: catalog.Verify, Limits: catalog.Limits,
		Store: h.store, Logf: warnf, Events: h.zoneEvents(catalog.Origin, h.publishedQuietly, h.cats.failuresOf(catalog.Origin).logf)})
}

// applyCatalog makes the block's member zones those the catalog names,
// each transferred as the catalog's settings say, and saved in store, as
// RFC 9432 has a consumer do:
//   - a member new to the block is added, one the catalog no longer names
//     removed, its saved copy with it (section 5.4);
//   - a member whose node's label (<unique-N>) changed is removed and
//     added anew (section 5.5): its version and copy are dropped, and it
//     is transferred whole, so a producer resets a zone so;
//   - a member of another catalog of the block is taken over only where
//     that catalog's coo property names this one (section 4.4.1), its
//     version kept where its label is the same in both, reset where not;
//     any other clash with a zone the block serves is ignored and logged
//     (section 5.3).
//
// A broken catalog (catalogMembers) changes nothing (section 5.1).
func (h *Handler) applyCatalog(catalog string, z *zonestore.Zone, settings *secondary.Config, store storage) {
	want, coo, err := catalogMembers(z)
	if err != nil {
		loadFailures.WithLabelValues(catalog).Inc()
		log.Errorf("Catalog zone %q serial %d is broken, not used (RFC 9432), keeping its members: %v", catalog, z.Serial(), err)
		return
	}
	h.cats.mu.Lock()
	defer h.cats.mu.Unlock()
	h.cats.init()
	have := h.cats.members[catalog]
	var added, gone, reset, taken []string
	fresh := map[string]bool{} // members whose version and copy are dropped first
	for o, label := range want {
		if old, ok := have[o]; ok {
			if old != label {
				reset, fresh[o] = append(reset, o), true
			}
			continue
		}
		if from := h.cats.ownerOf(o, catalog); from != "" {
			if h.cats.coo[from][o] != catalog {
				// Quietly where this catalog hands the member over to that one.
				if coo[o] != from {
					log.Errorf("Catalog zone %q names %q, a member of catalog zone %q, which does not hand it over (no coo property naming %q): ignored", catalog, o, from, catalog)
				}
				delete(want, o)
				continue
			}
			if h.cats.members[from][o] != label {
				fresh[o] = true
			}
			delete(h.cats.members[from], o)
			catalogMembersGauge.WithLabelValues(from).Set(float64(len(h.cats.members[from])))
			taken = append(taken, o)
			state := "kept"
			if fresh[o] {
				state = "reset"
			}
			log.Infof("Catalog zone %q: member zone %q taken over from catalog zone %q (coo), its state %s", catalog, o, from, state)
			continue
		}
		if h.secs.get(o) != nil || h.store.Get(o) != nil {
			log.Errorf("Catalog zone %q names %q, which the block already serves otherwise: ignored", catalog, o)
			delete(want, o)
			continue
		}
		added = append(added, o)
	}
	for o := range have {
		if _, ok := want[o]; !ok {
			gone, fresh[o] = append(gone, o), true
		}
	}

	// First the zones that go, or start afresh: out of the scheduler (no
	// refresh of theirs publishes after), then their versions and copies.
	out := map[string]*member{}
	var drop []string
	for o := range fresh {
		out[o], drop = nil, append(drop, o)
	}
	h.secs.put(out)
	h.store.RemoveAll(drop)
	for _, o := range drop {
		h.removed(o)
		store.drop(o)
	}

	// Then the zones that come, or start afresh, or change hands: their
	// places in the store made in one copy of its index, not one each as
	// their first transfers end.
	in := map[string]*member{}
	var coming []string
	var zones []*secondary.Zone
	for _, list := range [][]string{added, reset, taken} {
		for _, o := range list {
			m := h.catalogMember(catalog, settings, store, o)
			in[o], coming, zones = m, append(coming, o), append(zones, m.zone)
		}
	}
	h.store.Reserve(coming)
	bulkTransfers(zones, h.store.Generation)
	h.secs.put(in)
	logMembers(catalog, "added", added)
	logMembers(catalog, "removed", gone)
	logMembers(catalog, "reset (its member node renamed)", reset)
	h.cats.members[catalog], h.cats.coo[catalog] = want, coo
	catalogMembersGauge.WithLabelValues(catalog).Set(float64(len(want)))
}

// catalogMembers reads a catalog zone (RFC 9432): its members, each with
// the label of its member node (the PTR record at
// <unique-N>.zones.<catalog>, section 4.1), and the catalogs their coo
// properties name (section 4.4.1). A catalog is broken, and none of it
// used, where its version.<catalog> TXT RRset is not the one record "2"
// (section 4.2.1), a member node or a coo property holds more than one
// PTR record, or two member nodes name the same zone. Other properties
// (group, ext) are ignored, as the RFC lets a consumer.
func catalogMembers(z *zonestore.Zone) (members, coo map[string]string, err error) {
	origin := z.Origin()
	zones := "zones." + origin
	var versions []string
	members, coo = map[string]string{}, map[string]string{}
	cooOf := map[string]string{} // member node label -> the catalog its coo names
	z.Walk(func(rrs []dns.RR) bool {
		owner := strings.ToLower(rrs[0].Header().Name)
		var ptrs []string
		for _, rr := range rrs {
			switch r := rr.(type) {
			case *dns.TXT:
				if owner == "version."+origin {
					versions = append(versions, strings.Join(r.Txt, ""))
				}
			case *dns.PTR:
				ptrs = append(ptrs, dns.CanonicalName(r.Ptr))
			}
		}
		if len(ptrs) == 0 || !strings.HasSuffix(owner, "."+zones) {
			return true
		}
		labels := dns.SplitDomainName(strings.TrimSuffix(owner, "."+zones))
		switch {
		case len(labels) == 1 && len(ptrs) > 1:
			err = fmt.Errorf("member node %s holds %d PTR records, where one is allowed", owner, len(ptrs))
		case len(labels) == 1:
			if other, ok := members[ptrs[0]]; ok {
				err = fmt.Errorf("member nodes %s and %s both name %s", other+"."+zones, owner, ptrs[0])
			}
			members[ptrs[0]] = labels[0]
		case len(labels) == 2 && labels[0] == "coo" && len(ptrs) > 1:
			err = fmt.Errorf("coo property %s holds %d PTR records, where one is allowed", owner, len(ptrs))
		case len(labels) == 2 && labels[0] == "coo":
			cooOf[labels[1]] = ptrs[0]
		}
		return err == nil
	})
	switch {
	case err != nil:
		return nil, nil, err
	case len(versions) != 1 || versions[0] != "2":
		return nil, nil, fmt.Errorf("catalog version %q, want the one record \"2\" (RFC 9432)", versions)
	}
	for member, label := range members {
		if to, ok := cooOf[label]; ok {
			coo[member] = to
		}
	}
	return members, coo, nil
}

// keepMembers makes members, which the catalog named under the previous
// configuration (a Corefile reload), the catalog's members again, with
// the labels of their member nodes: their zones, still in the store, are
// refreshed from the catalog's primaries.
func (h *Handler) keepMembers(catalog secondary.Config, store storage, members map[string]string) {
	if len(members) == 0 {
		return
	}
	h.cats.mu.Lock()
	defer h.cats.mu.Unlock()
	h.cats.init()
	changes := map[string]*member{}
	settings := h.memberSettings(catalog)
	for o := range members {
		changes[o] = h.catalogMember(catalog.Origin, settings, store, o)
	}
	h.secs.put(changes)
	h.cats.members[catalog.Origin] = members
}

// catalogMember makes the member zone origin of catalog, transferred as
// the catalog's settings say and saved in store. A catalog's members
// have no metric series of their own, as a directory's zones have none:
// a catalog may name 100,000 zones, and a handful of series each took
// more memory than the zones (bench/zones.sh) and more than a Prometheus
// wants to scrape. Its transfers, failures and NOTIFY count under its
// catalog's zone label, and its log lines name it.
func (h *Handler) catalogMember(catalog string, settings *secondary.Config, store storage, origin string) *member {
	return &member{zone: secondary.NewMember(settings, origin, store.file(origin)), label: catalog}
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
// (bulkTransferGCPercent), so that the transfers' garbage frees room the zones
// then fill, where the headroom the server keeps for queries
// (internal/gcpace) would fill with it first. A secondary of 10,000 small
// zones was 427 MB resident, 3.6 kB a record, where the same zones read
// from files took 0.4 kB (bench/zones.sh). The pace is given back once
// every member is transferred, or no version was published (generation,
// the store's) for bulkStall, and the garbage left is given back to the
// system then, as after a directory's bulk load.
func bulkTransfers(zones []*secondary.Zone, generation func() uint64) {
	if len(zones) < bulkLoad {
		return
	}
	release := gcpace.Hold()
	old := debug.SetGCPercent(bulkTransferGCPercent)
	go func() {
		defer release()
		defer debug.SetGCPercent(old)
		defer debug.FreeOSMemory()
		// A look at every member each turn cost a turn in proportion to
		// the catalog, and the turns in proportion to it too: among
		// 1,000,000 members it took 27% of the CPU that transferred them
		// (a profile, bench/README.md 2026-12-07). A turn now looks at
		// bulkLook members at most, dropping those loaded, and the
		// transfers' progress is the store's generation.
		last, next := generation(), 0
		for since := time.Now(); len(zones) > 0 && time.Since(since) < bulkStall; {
			time.Sleep(500 * time.Millisecond)
			if g := generation(); g != last {
				last, since = g, time.Now()
			}
			zones, next = dropLoaded(zones, next, bulkLook)
		}
	}()
}

// bulkLook bounds the members bulkTransfers looks at a turn: 20,000 looks
// at the store, about 10 ms among a million zones, every 500 ms.
const bulkLook = 20000

// dropLoaded looks at up to n of zones, from the i-th on and round to the
// first, drops those loaded (the last one moved into a dropped one's
// place), and returns the zones left and where the next look begins.
func dropLoaded(zones []*secondary.Zone, i, n int) ([]*secondary.Zone, int) {
	for range n {
		if len(zones) == 0 {
			break
		}
		if i >= len(zones) {
			i = 0
		}
		if zones[i].Loaded() {
			last := len(zones) - 1
			zones[i], zones[last] = zones[last], nil
			zones = zones[:last]
			continue // the zone moved into i is looked at next
		}
		i++
	}
	return zones, i
}

// bulkStall is how long bulk transfers may go without one finishing
// before the collector's pace is given back.
const bulkStall = 10 * time.Second

// bulkTransferGCPercent is GOGC while a catalog's members transfer. A
// transfer leaves less garbage than a file's parse (its messages read
// into a pooled buffer, xfrin.go), so at a directory's 50 the collector
// ran seldom, and the garbage left holes among the zones' records: 100,000
// members took 646 MiB where the build before took 575. At 20, 590 to 598
// MiB, in 0.58 to 0.76 of the build before's time; at 10, 568 to 575 MiB
// and no faster than it (bench/README.md, 2026-12-07 15:16 to 15:24).
const bulkTransferGCPercent = 20
