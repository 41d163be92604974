package shardmetrics

import "github.com/miekg/dns"

// sizeBuckets are the stock request and response size buckets
// (plugin/metrics/vars); TestShardsCountAsStock finds the same buckets
// filled as the stock plugin's.
var sizeBuckets = []float64{0, 100, 200, 300, 400, 511, 1023, 2047, 4095, 8291, 16e3, 32e3, 48e3, 64e3}

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
