package zonestore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ontimedns/ontime/bench/workload"
)

// BenchmarkValidity170k measures reading the span of a 170,000-host zone's
// signatures (one a record, made by no key: only their times are read),
// what publishing a signed version, and the hourly look at one, cost.
func BenchmarkValidity170k(b *testing.B) {
	var text strings.Builder
	for i, line := range strings.Split(workload.Zone(170000), "\n") {
		text.WriteString(line + "\n")
		f := strings.Fields(line)
		if len(f) < 3 || strings.HasPrefix(line, "$") {
			continue
		}
		fmt.Fprintf(&text, "%s RRSIG %s 13 2 3600 %d 1767225600 12345 %s c2lnbmF0dXJl\n", f[0], f[1], 2082758400+i%86400, workload.Origin)
	}
	z, err := Parse(strings.NewReader(text.String()), workload.Origin, "")
	if err != nil {
		b.Fatal(err)
	}
	now := time.Now()
	b.ReportAllocs()
	var v Validity
	for b.Loop() {
		v, _ = z.Validity(now)
	}
	b.ReportMetric(float64(v.Signatures), "signatures")
}
