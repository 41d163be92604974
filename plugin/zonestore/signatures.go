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
		log.Errorf("Zone %q serial %d: the signature of %s expired at %s: validating resolvers answer SERVFAIL for it; sign the zone again",
			z.Origin(), z.Serial(), v.UntilSet, v.Until.UTC().Format(time.RFC3339))
	case v.From.After(now):
		log.Errorf("Zone %q serial %d: the signature of %s is not valid before %s: validating resolvers answer SERVFAIL for it until then",
			z.Origin(), z.Serial(), v.FromSet, v.From.UTC().Format(time.RFC3339))
	}
}
