package secondary

import (
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// A secondary's primary may itself be a secondary, whose copy is as old
// as its own last refresh from the zone's primary: a zone refreshed from
// it is served for a whole SOA expire more at each step of such a chain,
// long past the time the first secondary stopped, its signatures expired
// with it. RFC 7314's EXPIRE option has each refresh ask its primary how
// long the zone has left there, and keep no more than that. Every SOA
// query and transfer asks for it, as Knot DNS and BIND do; a primary
// that knows nothing of it answers without it, and the SOA expire holds.

// Expires returns when the version the zone holds expires without a
// refresh (its lease: the last good refresh, less what a primary's EXPIRE
// took off, plus the SOA's expire), and false before its first version.
// A time past is a zone expired, answered SERVFAIL.
func (s *Zone) Expires() (time.Time, bool) { return s.lease.Until() }

// expireOption is what a primary's answer said of the zone's expire
// (RFC 7314 section 2): seconds, where it gave them.
type expireOption struct {
	seconds uint32
	given   bool
}

// askExpire adds to m an OPT record with an empty EXPIRE option, before
// its TSIG record is added, with the UDP size Knot DNS and BIND send
// (DNS Flag Day 2020's).
func askExpire(m *dns.Msg) {
	m.SetEdns0(1232, false)
	o := m.IsEdns0()
	o.Option = append(o.Option, &dns.EDNS0_EXPIRE{Code: dns.EDNS0EXPIRE, Empty: true})
}

// answeredExpire reads the EXPIRE option of m, a primary's answer, if it
// has one with a value (not s.expireOf, the SOA's expire of a version).
func answeredExpire(m *dns.Msg) expireOption {
	o := m.IsEdns0()
	if o == nil {
		return expireOption{}
	}
	for _, e := range o.Option {
		if x, ok := e.(*dns.EDNS0_EXPIRE); ok && !x.Empty {
			return expireOption{seconds: x.Expire, given: true}
		}
	}
	return expireOption{}
}

// A primary of before EDNS (RFC 6891) may answer a query with an OPT
// record FORMERR, and would refresh nothing once every query asks for
// EXPIRE: such a query is asked again without it, as BIND does, and the
// SOA's expire holds for that refresh.

// refusedEDNS reports whether err is a primary's FORMERR to m where m
// carries an OPT record.
func refusedEDNS(m *dns.Msg, err error) bool {
	var r rcodeError
	return m.IsEdns0() != nil && errors.As(err, &r) && r.rcode == dns.RcodeFormatError
}

// withoutEDNS takes m's OPT record off, and its TSIG record, which
// signing m again puts back after what is left.
func withoutEDNS(m *dns.Msg) {
	m.Extra = slices.DeleteFunc(m.Extra, func(rr dns.RR) bool {
		t := rr.Header().Rrtype
		return t == dns.TypeOPT || t == dns.TypeTSIG
	})
}

// minRemoteExpire is the least a transfer's EXPIRE may say: a primary
// whose copy expires within it is expired (Knot DNS refuses it so).
const minRemoteExpire = 2

// expiredRemote refuses a transfer from a primary whose copy has expired.
func expiredRemote(e expireOption) error {
	if e.given && e.seconds < minRemoteExpire {
		return fmt.Errorf("the primary's copy has expired (EXPIRE %d s)", e.seconds)
	}
	return nil
}

// renewal returns the last good refresh to count z's expire from, once a
// refresh finds z to serve (RFC 7314 section 4): now, less what the
// primary's EXPIRE took off z's expire. After a transfer, the EXPIRE
// stands as given (transferred: the version is the primary's); after an
// SOA query or an IXFR that found z current, it only lengthens what is
// left (the primary may have been refreshed from a source the last
// transfer's was not). Neither makes it longer than z's own expire.
func (s *Zone) renewal(z *zonestore.Zone, e expireOption, transferred bool) time.Time {
	now := time.Now()
	if !e.given {
		return now
	}
	full := s.expireOf(z)
	left := time.Duration(e.seconds) * time.Second
	if !transferred {
		left = max(left, s.expiresIn(z))
	}
	return now.Add(min(left, full) - full)
}
