package zonestore

import (
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

// signatureWatch remembers, by origin, the span of the version it read
// last and what it last logged. It holds the version's generation, not
// the version: a version replaced since would otherwise stay in memory
// until the next look, a whole zone's worth for one built whole.
type signatureWatch struct {
	zones map[string]watched
}

// watched is what the watch knows of one zone.
type watched struct {
	generation uint64
	span       zonestore.Validity
	level      int
}

// signatureEvent is a zone whose signatures became due or expired.
type signatureEvent struct {
	z     *zonestore.Zone
	v     zonestore.Validity
	level int
}

// check looks at the signed zones of store at now and returns those whose
// level changed to due or expired since the last check.
func (w *signatureWatch) check(store *zonestore.Store, now time.Time) []signatureEvent {
	zones := make(map[string]watched, len(w.zones))
	var events []signatureEvent
	for _, o := range store.Origins() {
		z := store.Get(o)
		if z == nil {
			continue
		}
		before, seen := w.zones[o]
		v := before.span
		if !seen || before.generation != z.Generation() {
			var signed bool
			if v, signed = signatures(z, now); !signed {
				continue
			}
		}
		l := signaturesValid
		switch {
		case !v.Until.After(now):
			l = signaturesExpired
		case v.Until.Sub(now) < expiresSoon:
			l = signaturesExpireSoon
		}
		if l != signaturesValid && l != before.level {
			events = append(events, signatureEvent{z, v, l})
		}
		zones[o] = watched{z.Generation(), v, l}
	}
	w.zones = zones
	return events
}

// watchSignatures checks the store's signed zones every watchEvery until
// stop is closed, and logs what check finds.
func (h *Handler) watchSignatures(stop <-chan struct{}) {
	var w signatureWatch
	every(watchEvery, stop, func() {
		for _, e := range w.check(h.store, time.Now()) {
			if e.level == signaturesExpired {
				logExpired(e.z, e.v)
				continue
			}
			log.Warningf("Zone %q serial %d: the signature of %s expires at %s, in less than %s: sign the zone again before",
				e.z.Origin(), e.z.Serial(), e.v.UntilSet, e.v.Until.UTC().Format(time.RFC3339), expiresSoon)
		}
	})
}
