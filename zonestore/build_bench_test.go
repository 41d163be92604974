package zonestore

import "testing"

// BenchmarkBuild170k measures building a 170,000-name zone, what each swap of a large zone costs its writer.
func BenchmarkBuild170k(b *testing.B) {
	b.ReportAllocs()
	for i := 0; b.Loop(); i++ {
		genZone(b, "example.", 170000, uint32(i+1))
	}
}

// BenchmarkEdit170k measures making the next version of a 170,000-name zone
// that changes six names (the SOA and five others), what a swap costs when
// versions share all but a few names.
func BenchmarkEdit170k(b *testing.B) {
	const origin = "example."
	cur := genZone(b, origin, 170000, 1, versionNames(1, origin)...)
	b.ReportAllocs()
	b.ResetTimer()
	for v := 2; b.Loop(); v++ {
		cur = nextVersion(b, cur, v, origin)
	}
}
