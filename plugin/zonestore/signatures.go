package zonestore

import (
	"sync"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/ontimedns/ontime/zonestore"
)

// A pre-signed zone is served as signed: when its signer stops signing,
// nothing here notices, and validating resolvers answer SERVFAIL for its
// names once the signatures expire (RFC 4035 section 5.3.1). So each
// version published says when its earliest signature expires, as a
// metric to alert on, and a version whose signatures are already expired,
// or not yet valid, is logged as an error: it is served all the same, as
// Knot DNS and NSD serve one, for the version before it is no better.

var signaturesExpire = promauto.NewGaugeVec(prometheus.GaugeOpts{
	Namespace: plugin.Namespace,
	Subsystem: pluginName,
	Name:      "zone_signatures_expire_timestamp_seconds",
	Help:      "Unix time at which the earliest signature of the signed version being served expires (RFC 4034 section 3.1.5); none for an unsigned zone. Alert well before it: validating resolvers answer SERVFAIL after it.",
}, []string{"zone"})

// signatures returns when every signature of z is valid, where z is
// signed (DNSKEY at its apex and a signed SOA); false otherwise.
func signatures(z *zonestore.Zone, now time.Time) (zonestore.Validity, bool) {
	if !z.Signed() {
		return zonestore.Validity{}, false
	}
	return z.Validity(now)
}

// recordSignatures sets, or drops, the zone's expiry gauge.
func recordSignatures(z *zonestore.Zone, v zonestore.Validity, signed bool) {
	if !signed {
		signaturesExpire.DeleteLabelValues(z.Origin())
		return
	}
	signaturesExpire.WithLabelValues(z.Origin()).Set(float64(v.Until.Unix()))
}

// logSignatures logs a version whose signatures are not all valid now.
func logSignatures(z *zonestore.Zone, v zonestore.Validity, signed bool, now time.Time) {
	switch {
	case !signed:
	case !v.Until.After(now):
		logExpired(z, v)
	case v.From.After(now):
		log.Errorf("Zone %q serial %d: the signature of %s is not valid before %s: validating resolvers answer SERVFAIL for it until then",
			z.Origin(), z.Serial(), v.FromSet, v.From.UTC().Format(time.RFC3339))
	}
}

// logExpired logs z, whose signatures v says have expired, as an error.
func logExpired(z *zonestore.Zone, v zonestore.Validity) {
	log.Errorf("Zone %q serial %d: the signature of %s expired at %s: validating resolvers answer SERVFAIL for it; sign the zone again",
		z.Origin(), z.Serial(), v.UntilSet, v.Until.UTC().Format(time.RFC3339))
}

// Between versions the signatures age too: a signer that stopped leaves
// the last version served until its signatures expire. So every
// watchEvery the signed zones served are looked at again, and one whose
// earliest signature expires within expiresSoon is logged as a warning,
// and one past it as an error, once each time it becomes so: the log
// says what the gauge says, for an operator who has no alert on it.
const (
	watchEvery  = time.Hour
	expiresSoon = 24 * time.Hour
)

// Levels of a signed zone's signatures, as the watch last logged them.
const (
	signaturesValid = iota
	signaturesExpireSoon
	signaturesExpired
)

// spanNotes holds, by origin, the span of each signed version served, as
// noted when it was published, so that the watch does not read every
// signature of it again (103 to 126 ms for 323,009 of them,
// BenchmarkValidity170k), and what was last logged of it, so that
// nothing is logged twice. A note holds the version's generation, not the
// version: a replaced version would otherwise stay in memory until the
// next look, a whole zone's worth for one built whole. A sync.Map: the
// publishing goroutines each store a new note, the watch reads them and
// writes only a note's level; neither holds a lock while reading a zone.
type spanNotes struct{ m sync.Map }

// spanNote is what is known of one version's signatures.
type spanNote struct {
	generation uint64
	span       zonestore.Validity
	level      int // as last logged; the watch's alone once stored
}

// note records the span of z, just published at now (signed false: it has
// no signatures, and no note), with what publishing logged of it.
func (n *spanNotes) note(z *zonestore.Zone, v zonestore.Validity, signed bool, now time.Time) {
	if !signed {
		n.m.Delete(z.Origin())
		return
	}
	l := signaturesValid
	if !v.Until.After(now) {
		l = signaturesExpired // logSignatures said so
	}
	n.m.Store(z.Origin(), &spanNote{z.Generation(), v, l})
}

// forget drops the note of a zone no longer served.
func (n *spanNotes) forget(origin string) { n.m.Delete(origin) }

// signatureEvent is a zone whose signatures became due or expired.
type signatureEvent struct {
	z     *zonestore.Zone
	v     zonestore.Validity
	level int
}

// check looks at the signed zones of store at now and returns those whose
// level changed to due or expired since it was last logged. A version
// without a note (one carried over a Corefile reload) is read here, once.
func (n *spanNotes) check(store *zonestore.Store, now time.Time) []signatureEvent {
	var events []signatureEvent
	for _, o := range store.Origins() {
		z := store.Get(o)
		if z == nil {
			continue
		}
		x, seen := n.m.Load(o)
		note, _ := x.(*spanNote)
		if !seen || note.generation != z.Generation() {
			v, signed := signatures(z, now)
			if !signed {
				continue
			}
			fresh := &spanNote{z.Generation(), v, signaturesValid}
			// Where a version published meanwhile noted itself, its note stays.
			stored := false
			if seen {
				stored = n.m.CompareAndSwap(o, x, fresh)
			} else {
				_, loaded := n.m.LoadOrStore(o, fresh)
				stored = !loaded
			}
			if !stored {
				continue
			}
			note = fresh
		}
		l := signaturesValid
		switch {
		case !note.span.Until.After(now):
			l = signaturesExpired
		case note.span.Until.Sub(now) < expiresSoon:
			l = signaturesExpireSoon
		}
		if l != signaturesValid && l != note.level {
			events = append(events, signatureEvent{z, note.span, l})
		}
		note.level = l
	}
	return events
}

// watchSignatures checks the store's signed zones every watchEvery until
// stop is closed, and logs what check finds.
func (h *Handler) watchSignatures(stop <-chan struct{}) {
	every(watchEvery, stop, func() {
		for _, e := range h.spans.check(h.store, time.Now()) {
			if e.level == signaturesExpired {
				logExpired(e.z, e.v)
				continue
			}
			log.Warningf("Zone %q serial %d: the signature of %s expires at %s, in less than %s: sign the zone again before",
				e.z.Origin(), e.z.Serial(), e.v.UntilSet, e.v.Until.UTC().Format(time.RFC3339), expiresSoon)
		}
	})
}
