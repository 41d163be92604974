package zonestore

import (
	"sync"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
)

// Metrics read at each scrape from the running blocks, where keeping them
// as they change would put a write on a transfer's path or a query's.
//
// A catalog's members have no metric series of their own (catalog.go):
// among 100,000, the few not served (never transferred, or expired) had
// no count anywhere but the log. So each scrape counts them, by catalog,
// from the store: a look at every member, 82 to 89 ms for 100,000
// (BenchmarkUnservedMembers100k, mostly cache misses), at the scraper's
// pace. And the primaries held as unreachable (secondary's
// unreachable.go), which the log tells once a hold, are a series each
// while held: what an alert wants. And when each secondary zone expires
// (its lease, secondary's expire.go), a catalog's members folded into the
// first of them under the catalog's label, as their other counts are: an
// alert that a zone will be answered SERVFAIL unless a primary answers
// first.

var unservedDesc = prometheus.NewDesc(
	prometheus.BuildFQName(plugin.Namespace, pluginName, "catalog_members_unserved"),
	"Member zones of a catalog zone not served: pending (not transferred or loaded yet: SERVFAIL) or expired (no refresh within the SOA expire: SERVFAIL).",
	[]string{"catalog", "state"}, nil)

var unreachableDesc = prometheus.NewDesc(
	prometheus.BuildFQName(plugin.Namespace, pluginName, "primary_unreachable"),
	"1 for each primary of secondary zones that did not answer twice in a row and is not asked now (it is again after a hold of 10 s to 10 minutes, or at its NOTIFY).",
	[]string{"primary"}, nil)

var expiresDesc = prometheus.NewDesc(
	prometheus.BuildFQName(plugin.Namespace, pluginName, "secondary_expire_timestamp_seconds"),
	"Unix time at which a secondary zone expires without a refresh from a primary, and is answered SERVFAIL: its SOA expire from its last good refresh, or sooner where the primary's EXPIRE option said so (RFC 7314). Under a catalog zone's label, the first of the catalog and its members to expire.",
	[]string{"zone"}, nil)

// scraped is the collector of these metrics, over every running block.
var scraped = &scrapedCollector{handlers: map[*Handler]struct{}{}}

func init() { prometheus.MustRegister(scraped) }

type scrapedCollector struct {
	mu       sync.Mutex
	handlers map[*Handler]struct{}
}

func (c *scrapedCollector) track(h *Handler)   { c.mu.Lock(); c.handlers[h] = struct{}{}; c.mu.Unlock() }
func (c *scrapedCollector) untrack(h *Handler) { c.mu.Lock(); delete(c.handlers, h); c.mu.Unlock() }

func (c *scrapedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- unservedDesc
	ch <- unreachableDesc
	ch <- expiresDesc
}

func (c *scrapedCollector) Collect(ch chan<- prometheus.Metric) {
	c.mu.Lock()
	hs := make([]*Handler, 0, len(c.handlers))
	for h := range c.handlers {
		hs = append(hs, h)
	}
	c.mu.Unlock()
	counts := map[string]unserved{}   // a catalog two blocks follow counts once, summed
	held := map[string]bool{}         // a primary of two blocks is one series
	expires := map[string]time.Time{} // by label: the first to expire
	for _, h := range hs {
		h.secondaryExpiries(expires)
		for catalog, n := range h.unservedMembers() {
			sum := counts[catalog]
			sum.pending, sum.expired = sum.pending+n.pending, sum.expired+n.expired
			counts[catalog] = sum
		}
		for _, p := range h.secs.unreachable() {
			held[p] = true
		}
	}
	for catalog, n := range counts {
		ch <- prometheus.MustNewConstMetric(unservedDesc, prometheus.GaugeValue, float64(n.pending), catalog, "pending")
		ch <- prometheus.MustNewConstMetric(unservedDesc, prometheus.GaugeValue, float64(n.expired), catalog, "expired")
	}
	for p := range held {
		ch <- prometheus.MustNewConstMetric(unreachableDesc, prometheus.GaugeValue, 1, p)
	}
	for label, t := range expires {
		ch <- prometheus.MustNewConstMetric(expiresDesc, prometheus.GaugeValue, float64(t.Unix()), label)
	}
}

// secondaryExpiries keeps in first, by metric label, when the first of
// the block's secondary zones of that label expires, where it is sooner
// than what first holds.
func (h *Handler) secondaryExpiries(first map[string]time.Time) {
	for _, m := range h.secs.load() {
		if t, ok := m.zone.Expires(); ok {
			if f, seen := first[m.label]; !seen || t.Before(f) {
				first[m.label] = t
			}
		}
	}
}

// unserved counts a catalog's members not served.
type unserved struct{ pending, expired int }

// unservedMembers counts each catalog's members not served.
func (h *Handler) unservedMembers() map[string]unserved {
	h.cats.mu.Lock()
	defer h.cats.mu.Unlock()
	out := make(map[string]unserved, len(h.cats.members))
	for catalog, members := range h.cats.members {
		var n unserved
		for o := range members {
			switch z := h.store.Get(o); {
			case z == nil:
				n.pending++
			case z.Expired():
				n.expired++
			}
		}
		out[catalog] = n
	}
	return out
}
