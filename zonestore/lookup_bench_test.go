package zonestore

import (
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
)

// benchZone is the 50,000-host zone of the load test, parsed once, and
// 4,096 queries of its mix: few enough that what they touch stays in the
// caches.
func benchZone(b *testing.B) (*Zone, []workload.Query) {
	return benchZoneQueries(b, 4096)
}

// benchZoneQueries is benchZone with n queries.
func benchZoneQueries(b *testing.B, n int) (*Zone, []workload.Query) {
	z, err := Parse(strings.NewReader(workload.Zone(50000)), workload.Origin, "")
	if err != nil {
		b.Fatal(err)
	}
	return z, workload.Queries(50000, n)
}

// BenchmarkClassify: what the zone holds for a name of the mix.
func BenchmarkClassify(b *testing.B) {
	z, qs := benchZone(b)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		z.Classify(qs[i%len(qs)].Name)
	}
}

// BenchmarkLookup: the whole answer, sections filled, for the query mix,
// reusing the Response's arrays (Reuse) as zonestore's handler does.
func BenchmarkLookup(b *testing.B) {
	z, qs := benchZone(b)
	benchmarkLookup(b, z, qs)
}

// BenchmarkLookupCold is BenchmarkLookup over the load test's 200,000
// queries, which reach every name of the zone: what a query touches is
// mostly not in the caches, as under load, where the kernel's work
// between queries evicts the rest. The difference from BenchmarkLookup is
// what the zone's layout in memory costs.
func BenchmarkLookupCold(b *testing.B) {
	z, qs := benchZoneQueries(b, 200000)
	benchmarkLookup(b, z, qs)
}

func benchmarkLookup(b *testing.B, z *Zone, qs []workload.Query) {
	types := make([]uint16, len(qs))
	for i, q := range qs {
		types[i] = dns.StringToType[q.Type]
	}
	var res Response
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		res.Reuse()
		z.LookupInto(&res, qs[i%len(qs)].Name, types[i%len(qs)], false)
	}
}
