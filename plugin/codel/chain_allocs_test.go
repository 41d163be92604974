package codel

import (
	"runtime"
	"testing"

	"github.com/ontimedns/ontime/internal/raceflag"
)

// TestChainAllocations: the full chain allocates next to nothing a query,
// answered from a kept answer or looked up and packed (replay 0), the
// mix's names that do not exist among them (issue 7's target: at most
// one; the benchmark reads 0.02). An allocation a lookup makes for every
// query, as a key made on the stack did once it was copied through a
// method of its Name (which moved the stack room to the heap), reads 1.
func TestChainAllocations(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector makes sync.Pool drop what is put back")
	}
	for i, c := range chains {
		if c.name != "full" && c.name != "full-without-replay" {
			continue
		}
		t.Run(c.name, func(t *testing.T) {
			s, packed := chainServerOf(t, i, 4096)
			room := new(nameRoom)
			for _, m := range packed { // pools filled, answers kept
				serveOne(s, m, sink{}, room)
			}
			// The fewest of five rounds: the count is the process's, and
			// the server's own goroutines may allocate during one.
			per := 1e9
			for range 5 {
				var before, after runtime.MemStats
				runtime.ReadMemStats(&before)
				for _, m := range packed {
					serveOne(s, m, sink{}, room)
				}
				runtime.ReadMemStats(&after)
				per = min(per, float64(after.Mallocs-before.Mallocs)/float64(len(packed)))
				t.Logf("%.3f allocations a query", float64(after.Mallocs-before.Mallocs)/float64(len(packed)))
			}
			if per > 0.2 {
				t.Errorf("%.3f allocations a query, want next to none", per)
			}
		})
	}
}
