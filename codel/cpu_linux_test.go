//go:build linux

package codel

import (
	"fmt"
	"os"
	"testing"
	"time"
)

// TestStolenReadsProcStat checks stolen against /proc/stat read here
// independently (the first line's eighth value, in 10 ms ticks), and that
// processCPU counts it.
func TestStolenReadsProcStat(t *testing.T) {
	before := stolen()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Skip("no /proc/stat")
	}
	var user, nice, system, idle, iowait, irq, softirq, steal int64
	if _, err := fmt.Sscanf(string(b), "cpu %d %d %d %d %d %d %d %d", &user, &nice, &system, &idle, &iowait, &irq, &softirq, &steal); err != nil {
		t.Fatal(err)
	}
	busy, ok := processCPU()
	after := stolen()
	ns := steal * int64(10*time.Millisecond)
	if before > ns || ns > after {
		t.Fatalf("stolen %d then %d, /proc/stat %d between them", before, after, ns)
	}
	if !ok || busy < before {
		t.Fatalf("processCPU %d (ok %v), less than the stolen %d", busy, ok, before)
	}
}
