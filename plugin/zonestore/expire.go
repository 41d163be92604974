package zonestore

import (
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// A zone's own secondaries ask how long it may still be served here with
// RFC 7314's EXPIRE option, and keep it no longer (zonestore/secondary's
// expire.go): a secondary zone answers with what is left of its lease,
// one this server holds the master copy of with its SOA's expire
// (zonestore.Zone.ExpireIn). As Knot DNS does, every answer from a zone
// carries it, where the query asked; a query that asks is never answered
// from replay's kept answers (replay.Key keeps none with an option but
// COOKIE), so the seconds are those of the moment. The messages of a
// transfer carry it too, added by fastpack's writer (ExpireFor).

// withExpire returns extra with an OPT record of z's EXPIRE after it, in
// an array of its own (extra's is the lookup's, kept for the next
// answer). The writer below fills in the OPT record's size and flags from
// the query's, as it does for an OPT record it adds (request.SizeAndDo).
func withExpire(extra []dns.RR, z *zonestore.Zone) []dns.RR {
	opt := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
	opt.Option = []dns.EDNS0{&dns.EDNS0_EXPIRE{Code: dns.EDNS0EXPIRE, Expire: z.ExpireIn(time.Now())}}
	return append(extra[:len(extra):len(extra)], opt)
}

// ExpireFor implements fastpack.ExpireAnswerer: the EXPIRE of a zone this
// block serves, for the messages of its transfers, which the stock
// transfer plugin packs (plugin/fastpack's expire.go).
func (h *Handler) ExpireFor(zone string) (uint32, bool) {
	z := h.store.Get(zone)
	if z == nil || !h.serves(z.Origin()) {
		return 0, false
	}
	return z.ExpireIn(time.Now()), true
}
