package zonestore

import (
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
)

// benchZone is the 50,000-host zone of the load test, parsed once.
func benchZone(b *testing.B) (*Zone, []workload.Query) {
	z, err := Parse(strings.NewReader(workload.Zone(50000)), workload.Origin, "")
	if err != nil {
		b.Fatal(err)
	}
	return z, workload.Queries(50000, 4096)
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
