package zonestore

import (
	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promauto"

	"github.com/ontimedns/ontime/zonestore"
)

// Metrics move when a zone is loaded, never per query: the read path writes nothing shared.
var (
	loadFailures = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "load_failures_total",
		Help:      "Zone loads and reloads that were not published (unreadable file, parse or validation error); the previous version kept serving.",
	}, []string{"zone"})
	publishes = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "publishes_total",
		Help:      "Zone versions published.",
	}, []string{"zone"})
	serial = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "zone_serial",
		Help:      "SOA serial of the version being served.",
	}, []string{"zone"})
	generation = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "zone_generation",
		Help:      "Generation of the version being served; it increases with every publish.",
	}, []string{"zone"})
	dirZones = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "directory_zones",
		Help:      "Zones served from a directory (whose zones have no series of their own but load failures).",
	}, []string{"directory"})
	catalogMembersGauge = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "catalog_members",
		Help:      "Member zones a catalog zone names (whose zones have no series of their own: their transfers, failures and NOTIFY count under the catalog's zone label).",
	}, []string{"catalog"})
	records = promauto.NewGaugeVec(prometheus.GaugeOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "zone_records",
		Help:      "Resource records in the version being served.",
	}, []string{"zone"})
)

func recordPublished(z *zonestore.Zone) {
	o := z.Origin()
	publishes.WithLabelValues(o).Inc()
	serial.WithLabelValues(o).Set(float64(z.Serial()))
	generation.WithLabelValues(o).Set(float64(z.Generation()))
	records.WithLabelValues(o).Set(float64(z.Records()))
}

// forget drops a removed zone's gauges.
func forget(origin string) {
	serial.DeleteLabelValues(origin)
	generation.DeleteLabelValues(origin)
	records.DeleteLabelValues(origin)
	signaturesExpire.DeleteLabelValues(origin)
}

var (
	transfers = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "transfers_total",
		Help:      "Refreshes of secondary zones, by kind (axfr, ixfr, current: the primary had nothing newer, soa: the serial query failed) and result (published, failed, current).",
	}, []string{"zone", "type", "result"})
	notifies = promauto.NewCounterVec(prometheus.CounterOpts{
		Namespace: plugin.Namespace,
		Subsystem: pluginName,
		Name:      "notifies_total",
		Help:      "NOTIFY messages for secondary zones, by result: accepted (from a primary, signed where the zone has a TSIG key), refused (from anyone else, or not signed with the key).",
	}, []string{"zone", "result"})
)
