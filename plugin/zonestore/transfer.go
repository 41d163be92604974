package zonestore

import (
	"github.com/coredns/coredns/plugin/transfer"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// Transfer implements transfer.Transferer, so that the stock transfer
// plugin serves AXFR of the zones of this server block: one version,
// whole, whatever is published while it is sent. An IXFR from the current
// serial or a newer one is answered with the SOA alone (up to date); from
// a version still held (the last keepVersions), with the differences
// between it and each version after it; from an older one, with the whole
// zone (RFC 1995 section 4 allows it).
func (h *Handler) Transfer(zone string, serial uint32) (<-chan []dns.RR, error) {
	z := h.store.Get(zone)
	if z == nil || !h.serves(z.Origin()) {
		return nil, transfer.ErrNotAuthoritative
	}
	ch := make(chan []dns.RR)
	go func() {
		defer close(ch)
		if serial != 0 && !zonestore.SerialNewer(z.Serial(), serial) {
			ch <- []dns.RR{z.SOA()}
			return
		}
		if serial != 0 {
			if vs := h.history.since(z.Origin(), serial); len(vs) > 1 && vs[len(vs)-1].Serial() == z.Serial() {
				incremental(ch, vs)
				return
			}
		}
		// Chunks of about a message's worth, copied: Walk's slice is reused.
		var chunk []dns.RR
		z.Walk(func(rrs []dns.RR) bool {
			chunk = append(chunk, rrs...)
			if len(chunk) >= 500 {
				ch <- chunk
				chunk = nil
			}
			return true
		})
		ch <- append(chunk, z.SOA())
	}()
	return ch, nil
}

// serves reports whether origin is one of this block's zones.
func (h *Handler) serves(origin string) bool {
	if h.catalog != nil && h.catalog.origin == origin {
		return true
	}
	for _, o := range h.origins {
		if dns.CanonicalName(o) == origin {
			return true
		}
	}
	for _, d := range h.dirs {
		if d.serves(origin) {
			return true
		}
	}
	m := h.secs.get(origin)
	return m != nil && !m.catalog
}
