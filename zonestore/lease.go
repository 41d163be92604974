package zonestore

import (
	"sync/atomic"
	"time"

	"github.com/miekg/dns"
)

// A Lease is when a secondary zone stops being served without a refresh:
// its last good refresh plus its SOA expire (RFC 1034 section 4.3.5), or
// sooner where its primary said so (RFC 7314's EXPIRE option). Every
// version of one secondary zone shares its zone's Lease, which each
// refresh moves on without a new version; a query reads it to answer an
// EXPIRE option, as the zone's own secondaries ask, so that a chain of
// secondaries expires when the first would, not an SOA expire later at
// each step.
type Lease struct{ until atomic.Int64 } // unix nanoseconds; 0: not set

// Set makes t the lease's end.
func (l *Lease) Set(t time.Time) { l.until.Store(t.UnixNano()) }

// Until returns the lease's end, and false where it was never set.
func (l *Lease) Until() (time.Time, bool) {
	u := l.until.Load()
	return time.Unix(0, u), u != 0
}

// SetLease gives z, before it is published, the lease of its zone.
func (z *Zone) SetLease(l *Lease) { z.lease = l }

// Lease returns z's lease, nil where it has none.
func (z *Zone) Lease() *Lease { return z.lease }

// ExpireIn is what an answer from z says of how long it may be served
// (the EXPIRE option, RFC 7314 section 3): the seconds left on a secondary
// zone's lease at now, 0 once it has run out; the SOA's expire for a zone
// with no lease, whose master copy this server holds (Knot DNS and BIND
// answer so).
func (z *Zone) ExpireIn(now time.Time) uint32 {
	if z.lease == nil {
		return z.soa.Expire
	}
	until, ok := z.lease.Until()
	if !ok {
		return z.soa.Expire // published before its first refresh's renewal: at most microseconds
	}
	left := until.Sub(now)
	if left <= 0 || z.expired {
		return 0
	}
	return uint32(min(left/time.Second, 1<<32-1))
}

// AsksExpire reports whether opt, a query's OPT record, holds an EXPIRE
// option: its answers carry ExpireIn (zonestore's handler for a query,
// fastpack's writer for each message of a transfer).
func AsksExpire(opt *dns.OPT) bool {
	for _, o := range opt.Option {
		if o.Option() == dns.EDNS0EXPIRE {
			return true
		}
	}
	return false
}
