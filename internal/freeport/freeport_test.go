package freeport

import "testing"

// TestNoPortTwice: 500 ports, each given once. The kernel picks a port
// for each probe from some 28,000, and a closed probe's port may come
// again: without the record of those given, 500 draws repeat one nearly
// always (about 4 repeats expected).
func TestNoPortTwice(t *testing.T) {
	seen := map[int]bool{}
	for range 500 {
		p := Get(t)
		if seen[p] {
			t.Fatalf("port %d given twice", p)
		}
		seen[p] = true
	}
}
