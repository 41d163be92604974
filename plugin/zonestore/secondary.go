package zonestore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/plugin/tsig"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
	"github.com/ontimedns/ontime/zonestore/secondary"
)

// transfersDefault is how many refreshes (an SOA query, and a transfer if
// the primary has news) of the block's secondary zones run at once,
// without `transfers N`: BIND's transfers-in.
const transfersDefault = 10

// limitsDefault holds a primary's SOA timers above Knot's floors (its
// refresh-min-interval, retry-min-interval and expire-min-interval): an
// SOA with a refresh of 0 would otherwise have a zone refreshed ten times
// a second. No ceilings, and no limit on a zone's size, as in Knot and
// BIND; a transfer may take two hours, BIND's max-transfer-time-in.
var limitsDefault = secondary.Limits{
	Refresh:      secondary.Bounds{Min: 2 * time.Second},
	Retry:        secondary.Bounds{Min: time.Second},
	Expire:       secondary.Bounds{Min: 3 * time.Second},
	TransferTime: 2 * time.Hour,
}

// parseBounds reads `MIN [MAX]`: durations, MAX 0 or absent for none.
func parseBounds(args []string) (secondary.Bounds, error) {
	if len(args) != 1 && len(args) != 2 {
		return secondary.Bounds{}, errors.New("MIN [MAX] expected, as durations (30s, 1h)")
	}
	var d [2]time.Duration
	for i, a := range args {
		v, err := time.ParseDuration(a)
		if err != nil || v < 0 {
			return secondary.Bounds{}, fmt.Errorf("%q is not a duration of 0 or more (30s, 1h)", a)
		}
		d[i] = v
	}
	if d[1] != 0 && d[1] < d[0] {
		return secondary.Bounds{}, fmt.Errorf("the most, %s, is less than the least, %s", d[1], d[0])
	}
	return secondary.Bounds{Min: d[0], Max: d[1]}, nil
}

// secondaries is the block's secondary zones (catalog zones among them).
// Queries read the set without a lock (a copy-on-write map); catalog
// zones change it as they learn of member zones. Once started, their
// refreshes run on a Scheduler of `transfers` workers.
type secondaries struct {
	mu      sync.Mutex
	set     atomic.Pointer[map[string]*member]
	workers int                  // transfers: refreshes at once
	sched   *secondary.Scheduler // nil before start and after stopAll
}

type member struct {
	zone    *secondary.Zone
	catalog bool   // a catalog zone: kept, not served
	label   string // the zone label of its metrics: its origin, or its catalog's (secondaryMember)
}

func (s *secondaries) load() map[string]*member {
	if m := s.set.Load(); m != nil {
		return *m
	}
	return nil
}

func (s *secondaries) get(origin string) *member { return s.load()[origin] }

// put adds zones, or removes those whose member is nil, by origin, in one
// copy of the set: a catalog's version of 10,000 members is one change,
// not 10,000 copies of a growing map. The zones are scheduled after the
// lock is let go: adding one loads its saved copy, and a catalog's copy
// loaded adds its members here (a NOTIFY meanwhile finds a zone not yet
// scheduled, and is dropped: the zone is refreshed as it is scheduled).
func (s *secondaries) put(changes map[string]*member) {
	s.mu.Lock()
	next := make(map[string]*member, len(s.load())+len(changes))
	for o, x := range s.load() {
		next[o] = x
	}
	var added, removed []*secondary.Zone
	for origin, m := range changes {
		if old := next[origin]; old != nil {
			removed = append(removed, old.zone)
			delete(next, origin)
		}
		if m != nil {
			next[origin] = m
			added = append(added, m.zone)
		}
	}
	s.set.Store(&next)
	sched := s.sched
	s.mu.Unlock()
	if sched != nil {
		for _, z := range removed {
			sched.Remove(z)
		}
		for _, z := range added {
			sched.Add(z)
		}
	}
}

// start schedules every zone; stopAll stops them.
func (s *secondaries) start() {
	s.mu.Lock()
	sched := secondary.NewScheduler(s.workers)
	s.sched = sched
	set := s.load()
	s.mu.Unlock()
	for _, m := range set {
		sched.Add(m.zone)
	}
}

// unreachable returns the primaries the block's Scheduler holds as
// unreachable now.
func (s *secondaries) unreachable() []string {
	s.mu.Lock()
	sched := s.sched
	s.mu.Unlock()
	if sched == nil {
		return nil
	}
	return sched.Unreachable()
}

func (s *secondaries) stopAll() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.sched != nil {
		s.sched.Stop()
		s.sched = nil
	}
	s.set.Store(nil)
}

// addSecondary adds a zone kept by transfers from its primaries, counted
// under its own label.
func (h *Handler) addSecondary(cfg secondary.Config) {
	cfg.Logf, cfg.Events = warnf, h.zoneEvents(cfg.Origin, h.published, log.Errorf)
	h.secs.put(map[string]*member{cfg.Origin: {zone: secondary.New(cfg), label: cfg.Origin}})
}

// warnf is the secondary zones' Logf: log.Warningf made a func value once,
// where each zone's was a closure of its own.
var warnf = log.Warningf

// zoneEvents is the Events of secondary zones counted under label (their
// own origin, or their catalog's): a failure logged with errorf, a new
// version handed to published.
func (h *Handler) zoneEvents(label string, published func(*zonestore.Zone), errorf func(string, ...any)) func(string, string, *zonestore.Zone, error) {
	return transferEvents(label, func(origin, kind string, err error) {
		outcome := keeping(h.store.Get(origin))
		if kind == secondary.Saved {
			outcome = "still served"
		}
		errorf("%s of zone %q failed, %s: %v", eventName(kind), origin, outcome, err)
	}, func(origin, kind string, z *zonestore.Zone) {
		published(z)
		if kind == secondary.Restored {
			log.Infof("Loaded zone %q from its saved copy: serial %d, generation %d", origin, z.Serial(), z.Generation())
			return
		}
		log.Infof("Transferred zone %q (%s): serial %d, generation %d", origin, kind, z.Serial(), z.Generation())
	})
}

// transferEvents counts a zone's refreshes (transfers_total, and a failure
// among load_failures_total) under label, and hands a failure or a new
// version on. The saved copy's events count as refreshes of their own
// kinds: the copy loaded at start ("restored"), and a copy not written
// ("saved"), which is no version lost.
func transferEvents(label string, failed func(origin, kind string, err error), published func(origin, kind string, z *zonestore.Zone)) func(string, string, *zonestore.Zone, error) {
	return func(origin, kind string, z *zonestore.Zone, err error) {
		switch {
		case err != nil:
			transfers.WithLabelValues(label, kind, "failed").Inc()
			if kind != secondary.Saved {
				loadFailures.WithLabelValues(label).Inc()
			}
			failed(origin, kind, err)
		case z != nil:
			transfers.WithLabelValues(label, kind, "published").Inc()
			published(origin, kind, z)
		default:
			transfers.WithLabelValues(label, kind, "current").Inc()
		}
	}
}

// notify answers a NOTIFY (RFC 1996) for a secondary zone: from one of its
// primaries, signed with the zone's TSIG key where it has one, it is
// acknowledged (signed with the same key) and the zone refreshed at once,
// unless the SOA serial it carries is one the zone serves already
// (counted "current"), its primaries at that address no longer held
// unreachable;
// anything else is refused, logged and counted. The signature was checked
// by the server's reader (CoreDNS's, or codel's), which knows the key
// because setup added it to the server's secrets; where the stock tsig
// plugin stands before, it checked the signature, took the TSIG record
// off the message and will sign the answer itself.
func (h *Handler) notify(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, m *member) (int, error) {
	sec := m.zone
	var ip net.IP
	switch a := w.RemoteAddr().(type) {
	case *net.UDPAddr:
		ip = a.IP
	case *net.TCPAddr:
		ip = a.IP
	}
	if !sec.IsPrimary(ip) {
		notifies.WithLabelValues(m.label, "refused").Inc()
		log.Warningf("NOTIFY for %q from %s, not one of its primaries: refused", sec.Origin(), ip)
		return h.reply(w, r, dns.RcodeRefused)
	}
	key := sec.Key()
	byPlugin, _ := tsig.ValidatedKeyName(ctx)
	byPlugin = dns.CanonicalName(byPlugin)
	// ours to check and to sign: a key is required, and the tsig plugin
	// has not verified it already.
	ours := key != nil && byPlugin != key.Name
	if ours {
		t := r.IsTsig()
		var why string
		switch {
		case t == nil && byPlugin != ".":
			why = "signed with key " + byPlugin
		case t == nil:
			why = "unsigned"
		case !strings.EqualFold(t.Hdr.Name, key.Name):
			why = "signed with key " + t.Hdr.Name
		case w.TsigStatus() != nil:
			why = "TSIG " + w.TsigStatus().Error()
		}
		if why != "" {
			notifies.WithLabelValues(m.label, "refused").Inc()
			log.Warningf("NOTIFY for %q from %s, %s where key %s is required: refused", sec.Origin(), ip, why, key.Name)
			return h.reply(w, r, dns.RcodeNotAuth)
		}
	}
	result := "accepted"
	if serial, ok := notifiedSerial(r, sec.Origin()); !ok {
		sec.NotifyFrom(ip)
	} else if !sec.NotifySerialFrom(ip, serial) {
		result = "current"
	}
	notifies.WithLabelValues(m.label, result).Inc()
	ack := new(dns.Msg)
	ack.SetReply(r)
	ack.Authoritative = true
	if ours {
		ack.SetTsig(key.Name, key.Algorithm, 300, time.Now().Unix())
	}
	w.WriteMsg(ack)
	return dns.RcodeSuccess, nil
}

// notifiedSerial returns the serial of the SOA record a NOTIFY for origin
// carries in its answer section, where it has one (RFC 1996 section 3.7:
// "an unsecure hint", which Knot, BIND and NSD send). A record of another
// owner or type is no hint.
func notifiedSerial(r *dns.Msg, origin string) (uint32, bool) {
	for _, rr := range r.Answer {
		if soa, ok := rr.(*dns.SOA); ok && strings.EqualFold(dns.Fqdn(soa.Hdr.Name), origin) {
			return soa.Serial, true
		}
	}
	return 0, false
}

// pendingSecondary returns the secondary zone qname falls in, if it has
// not been transferred yet: such a query gets SERVFAIL, not a referral
// elsewhere. It is asked only where no zone served holds qname, so the
// nearest secondary zone above it, if any, is the one: one map lookup a
// label, however many zones a catalog brought.
func (h *Handler) pendingSecondary(qname string) *secondary.Zone {
	set := h.secs.load()
	if len(set) == 0 {
		return nil
	}
	name := strings.ToLower(dns.Fqdn(qname))
	for off, end := 0, false; !end; off, end = dns.NextLabel(name, off) {
		if m := set[name[off:]]; m != nil && !m.catalog {
			if m.zone.Loaded() {
				return nil
			}
			return m.zone
		}
	}
	if m := set["."]; m != nil && !m.catalog && !m.zone.Loaded() {
		return m.zone
	}
	return nil
}

// eventName says what failed, for a log line.
func eventName(kind string) string {
	switch kind {
	case secondary.Restored:
		return "Loading the saved copy"
	case secondary.Saved:
		return "Saving a copy"
	}
	return "Transfer (" + kind + ")"
}
