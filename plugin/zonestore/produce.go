package zonestore

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// A producer keeps a catalog zone (RFC 9432) naming the zones a server
// block holds the master copy of, its files' and its directories' zones:
// `generate_catalog NAME`, as Knot's catalog-role generate. A secondary
// that follows it (Knot's catalog-role interpret, BIND's catalog-zones,
// ontime's `catalog`) serves every zone of a directory of 100,000
// without a line of configuration each, and takes up a zone added or
// drops one removed by the catalog's next version, which the transfer
// plugin's NOTIFY announces and an IXFR carries.
//
// Each member's node is labelled by a hash of its name: the same in every
// version and across restarts, so a version changes only the nodes of the
// zones that came or went (section 5.1: a label changed is a reset).
// Each version's serial is the time, or one more than the last where
// that is not newer, so a catalog built again after a restart is newer
// than the one its secondaries hold.
type producer struct {
	origin  string
	h       *Handler
	started atomic.Bool // once the server runs: the block's zones are all read

	mu     sync.Mutex
	labels map[string]string // the member zones of the version published, and their nodes' labels; nil: none known
}

// catalogSOA is a generated catalog's SOA record (its origin, its
// serial), as RFC 9432's examples have it.
const catalogSOA = "%s 0 IN SOA invalid. invalid. %d 3600 600 2147483646 0"

// start publishes the catalog's first version, or its next where the
// one held (carried over a Corefile reload) names other zones, and has
// update do so from then on.
func (p *producer) start() {
	p.started.Store(true)
	p.update()
}

// update publishes a new version of the catalog where the block's zones
// are not the ones its version names: after each directory scan and each
// version of a zone file published, once started (the zones read while
// the block is set up make one version, not one each).
func (p *producer) update() {
	if !p.started.Load() {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, d := range p.h.dirs {
		if d.serves(p.origin) {
			log.Errorf("Catalog zone %q not published: a zone file of %s is for it", p.origin, d.dir)
			return
		}
	}
	cur := p.h.store.Get(p.origin)
	if p.labels == nil && cur != nil {
		// Carried over a Corefile reload: its labels are the ones to keep.
		if members, _, err := catalogMembers(cur); err == nil {
			p.labels = members
		}
	}
	want := p.h.primaryZones(p.origin)
	if cur != nil && p.labels != nil && len(want) == len(p.labels) && !slices.ContainsFunc(want, func(m string) bool { _, ok := p.labels[m]; return !ok }) {
		return
	}
	slices.Sort(want)
	want = slices.Compact(want) // a zone both a file's and a directory's
	z, labels, err := p.build(cur, want)
	if err == nil {
		err = p.h.store.Publish(cur, z, false)
	}
	if err != nil {
		log.Errorf("Catalog zone %q not published: %v", p.origin, err)
		return
	}
	p.labels = labels
	log.Infof("Catalog zone %q: serial %d, %d member zones", p.origin, z.Serial(), len(want))
	p.h.published(z)
}

// build returns the catalog's version naming members: an edit of cur
// where its labels are known (only the nodes of the zones that came or
// went change), a whole zone otherwise.
func (p *producer) build(cur *zonestore.Zone, members []string) (*zonestore.Zone, map[string]string, error) {
	serial := uint32(time.Now().Unix())
	if cur != nil && !zonestore.SerialNewer(serial, cur.Serial()) {
		serial = cur.Serial() + 1
	}
	soa, err := dns.NewRR(fmt.Sprintf(catalogSOA, p.origin, serial))
	if err != nil {
		return nil, nil, err
	}
	labels := make(map[string]string, len(members))
	taken := make(map[string]bool, len(members))
	var b *zonestore.Builder
	if cur != nil && p.labels != nil {
		b = cur.Edit()
		if err := b.Delete(cur.SOA()); err != nil {
			return nil, nil, err
		}
		for m, l := range p.labels {
			if _, found := slices.BinarySearch(members, m); !found {
				if err := b.Delete(p.memberPTR(l, m)); err != nil {
					return nil, nil, err
				}
				continue
			}
			labels[m], taken[l] = l, true
		}
	} else {
		if b, err = zonestore.NewBuilder(p.origin, ""); err != nil {
			return nil, nil, err
		}
		for _, s := range []string{p.origin + " 0 IN NS invalid.", "version." + p.origin + ` 0 IN TXT "2"`} {
			rr, err := dns.NewRR(s)
			if err != nil {
				return nil, nil, err
			}
			if err := b.Add(rr, 0); err != nil {
				return nil, nil, err
			}
		}
	}
	if err := b.Add(soa, 0); err != nil {
		return nil, nil, err
	}
	for _, m := range members {
		if _, ok := labels[m]; ok {
			continue
		}
		l := memberLabel(m, taken)
		labels[m], taken[l] = l, true
		if err := b.Add(p.memberPTR(l, m), 0); err != nil {
			return nil, nil, err
		}
	}
	z, err := b.Build()
	return z, labels, err
}

// memberPTR is the record of member's node, labelled label.
func (p *producer) memberPTR(label, member string) dns.RR {
	return &dns.PTR{Hdr: dns.RR_Header{Name: label + ".zones." + p.origin, Rrtype: dns.TypePTR, Class: dns.ClassINET}, Ptr: member}
}

// memberLabel is member's node's label: the first 16 hex digits of the
// SHA-256 of its name, or all 64 where another member has those already
// (one pair in 10^7 among a million zones).
func memberLabel(member string, taken map[string]bool) string {
	sum := sha256.Sum256([]byte(member))
	if l := hex.EncodeToString(sum[:8]); !taken[l] {
		return l
	}
	return hex.EncodeToString(sum[:])
}

// primaryZones returns the zones the block serves from its files and its
// directories, less catalog: a catalog's members, in no order.
func (h *Handler) primaryZones(catalog string) []string {
	n := len(h.origins)
	for _, d := range h.dirs {
		n += len(*d.current.Load())
	}
	out := make([]string, 0, n)
	add := func(o string) {
		if o != catalog && h.store.Get(o) != nil {
			out = append(out, o)
		}
	}
	for _, o := range h.origins {
		add(dns.CanonicalName(o))
	}
	for _, d := range h.dirs {
		for o := range *d.current.Load() {
			add(o)
		}
	}
	return out
}

// updateCatalog has the block's catalog, if it generates one, name the
// zones it serves now.
func (h *Handler) updateCatalog() {
	if h.catalog != nil {
		h.catalog.update()
	}
}

// publishedFile is published for a zone file's version, which may be the
// first of its zone (a file missing at start): the catalog then names it.
func (h *Handler) publishedFile(z *zonestore.Zone) {
	h.published(z)
	h.updateCatalog()
}
