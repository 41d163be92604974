package shardmetrics

import (
	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
)

// vecs is one shard's own copy of the six query families the stock
// prometheus plugin reports (plugin/metrics/vars): the same names, help,
// labels, buckets and native-histogram resolution, registered nowhere. The
// collector adds them to the stock ones at scrape time. TestVecsAreStock
// holds them to the stock definitions.
type vecs struct {
	requests, do, rcode         *prometheus.CounterVec
	duration, reqSize, respSize *prometheus.HistogramVec
}

// sizeBuckets are the stock request and response size buckets.
var sizeBuckets = []float64{0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16e3, 32e3, 48e3, 64e3}

func newVecs() *vecs {
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: plugin.Namespace, Subsystem: "dns", Name: name, Help: help}, labels)
	}
	histogram := func(name, help string, buckets []float64, labels ...string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: plugin.Namespace, Subsystem: "dns", Name: name, Help: help,
			Buckets: buckets, NativeHistogramBucketFactor: plugin.NativeHistogramBucketFactor}, labels)
	}
	return &vecs{
		requests: counter("requests_total", "Counter of DNS requests made per zone, protocol and family.",
			"server", "zone", "view", "proto", "family", "type"),
		do: counter("do_requests_total", "Counter of DNS requests with DO bit set per zone.",
			"server", "zone", "view"),
		rcode: counter("responses_total", "Counter of response status codes.",
			"server", "zone", "view", "rcode", "plugin"),
		duration: histogram("request_duration_seconds", "Histogram of the time (in seconds) each request took per zone.",
			plugin.TimeBuckets, "server", "zone", "view"),
		reqSize: histogram("request_size_bytes", "Size of the EDNS0 UDP buffer in bytes (64K for TCP) per zone and protocol.",
			sizeBuckets, "server", "zone", "view", "proto"),
		respSize: histogram("response_size_bytes", "Size of the returned response in bytes.",
			sizeBuckets, "server", "zone", "view", "proto"),
	}
}

// qtypeNames are the query types the stock plugin names in its "type"
// label (vars.monitorType), by number: all are under 256. Every other type
// is "other".
var qtypeNames = func() (names [256]string) {
	for _, t := range []uint16{
		dns.TypeAAAA, dns.TypeA, dns.TypeCNAME, dns.TypeDNSKEY, dns.TypeDS, dns.TypeMX,
		dns.TypeNSEC3, dns.TypeNSEC, dns.TypeNS, dns.TypePTR, dns.TypeRRSIG, dns.TypeSOA,
		dns.TypeSRV, dns.TypeTXT, dns.TypeHTTPS, dns.TypeSVCB,
		dns.TypeIXFR, dns.TypeAXFR, dns.TypeANY,
	} {
		names[t] = dns.Type(t).String()
	}
	return names
}()

func qtypeLabel(t uint16) string {
	if t < 256 && qtypeNames[t] != "" {
		return qtypeNames[t]
	}
	return "other"
}
