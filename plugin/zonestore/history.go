package zonestore

import (
	"strings"
	"sync"
	"time"

	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// keepVersions is how many versions of each zone are held for IXFR out:
// versions built by an edit (IXFR in, a re-read file) share their
// untouched data, but one built whole (a file mostly changed, a pre-signed
// zone, an AXFR) is a whole copy, so the count stays small.
const keepVersions = 4

// history holds each zone's latest versions, oldest first.
type history struct {
	mu       sync.Mutex
	versions map[string][]*zonestore.Zone
}

func (hs *history) add(z *zonestore.Zone) {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	if hs.versions == nil {
		hs.versions = map[string][]*zonestore.Zone{}
	}
	vs := hs.versions[z.Origin()]
	if n := len(vs); n > 0 && vs[n-1].Serial() == z.Serial() {
		vs[n-1] = z // the same data, republished (expired or back)
		return
	}
	if n := len(vs); n > 0 && vs[n-1] != z {
		// Replaced: held for IXFR only, it is re-read no more.
		vs[n-1].DropText()
	}
	vs = append(vs, z)
	if len(vs) > keepVersions {
		vs = append(vs[:0:0], vs[len(vs)-keepVersions:]...)
	}
	hs.versions[z.Origin()] = vs
}

// since returns the versions from the one with serial to the latest, or
// nil when that version is no longer held.
func (hs *history) since(origin string, serial uint32) []*zonestore.Zone {
	hs.mu.Lock()
	defer hs.mu.Unlock()
	vs := hs.versions[origin]
	for i, v := range vs {
		if v.Serial() == serial {
			return append([]*zonestore.Zone(nil), vs[i:]...)
		}
	}
	return nil
}

func (hs *history) forget(origin string) {
	hs.mu.Lock()
	delete(hs.versions, origin)
	hs.mu.Unlock()
}

// published is called after every version a source publishes: its
// metrics, its place in the history, and NOTIFY to the transfer plugin's
// secondaries.
func (h *Handler) published(z *zonestore.Zone) {
	recordPublished(z)
	now := time.Now()
	v, signed := signatures(z, now)
	recordSignatures(z, v, signed)
	h.announce(z, v, signed, now)
}

// publishedQuietly is published without the zone's own metric series: a
// directory may hold a million zones, and four series each would cost more
// memory than the zones (bench/zones.sh), and more than a Prometheus wants
// to scrape. Directories export their zone count instead.
func (h *Handler) publishedQuietly(z *zonestore.Zone) {
	now := time.Now()
	v, signed := signatures(z, now)
	h.announce(z, v, signed, now)
}

// announce logs what is wrong with z but served all the same, holds it
// for IXFR out, and sends NOTIFY for it.
func (h *Handler) announce(z *zonestore.Zone, v zonestore.Validity, signed bool, now time.Time) {
	logSignatures(z, v, signed, now)
	h.spans.note(z, v, signed, now)
	if r := z.Retimed(); r != nil {
		log.Warningf("Zone %q serial %d: %d RRsets had records of differing TTLs, each given its last record's (RFC 2181 5.2), as Knot DNS does: %s",
			z.Origin(), z.Serial(), r.Sets, strings.Join(r.Examples, ", "))
	}
	if !z.HasApexNS() {
		log.Warningf("Zone %q serial %d has no NS records at its apex (RFC 1034 section 4.2.1): served, as Knot DNS serves it, but no resolver can be referred to it",
			z.Origin(), z.Serial())
	}
	h.history.add(z)
	if x := h.xfer.Load(); x != nil {
		go func() {
			if err := x.Notify(z.Origin()); err != nil {
				log.Warningf("Failed to send NOTIFY for %q: %v", z.Origin(), err)
			}
		}()
	}
}

// incremental writes the IXFR answer (RFC 1995 section 4) from versions,
// the client's first: the newest SOA, then for each step the old SOA, the
// records deleted, the new SOA, the records added; and the newest SOA.
func incremental(ch chan<- []dns.RR, versions []*zonestore.Zone) {
	last := versions[len(versions)-1].SOA()
	ch <- []dns.RR{last}
	for i := 0; i+1 < len(versions); i++ {
		del, add := zonestore.Diff(versions[i], versions[i+1])
		step := append([]dns.RR{versions[i].SOA()}, del...)
		step = append(step, versions[i+1].SOA())
		ch <- append(step, add...)
	}
	ch <- []dns.RR{last}
}

var _ transfer.Transferer = (*Handler)(nil)

// removed is called when a zone stops being served.
func (h *Handler) removed(origin string) {
	forget(origin)
	h.history.forget(origin)
	h.spans.forget(origin)
}
