//go:build linux

package codel

import (
	"bytes"
	"os"
	"strconv"
	"time"
)

// processCPU returns, summed over the process's threads, the time they
// ran plus the time they waited, runnable, for a CPU (nanoseconds, from
// /proc/self/task/*/schedstat). A thread that waits for a CPU wants one:
// on a host shared with other processes, CPU time alone would count the
// time they take as idle. ok is false when schedstat cannot be read.
//
// In a virtual machine the hypervisor also takes CPUs away (steal time), and
// a thread running when its CPU is taken shows as neither running nor
// waiting: the machine's stolen time counts as waited for too. (It is
// counted whole, for every CPU: it accrues only while a CPU has work, and
// at worst a busy neighbour's share makes workers look less idle, so fewer
// are added.)
func processCPU() (busy int64, ok bool) {
	busy = stolen()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, false
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			return 0, false
		}
		r, err1 := strconv.ParseInt(string(f[0]), 10, 64)
		w, err2 := strconv.ParseInt(string(f[1]), 10, 64)
		if err1 != nil || err2 != nil {
			return 0, false
		}
		busy += r + w
	}
	return busy, true
}

// stolen returns the time the hypervisor took from this machine's CPUs
// (nanoseconds; /proc/stat's steal, in 10 ms ticks), or 0 where it is not
// reported.
func stolen() int64 {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return 0
	}
	line, _, _ := bytes.Cut(b, []byte("\n"))
	f := bytes.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(f) < 9 || string(f[0]) != "cpu" {
		return 0
	}
	ticks, err := strconv.ParseInt(string(f[8]), 10, 64)
	if err != nil {
		return 0
	}
	return ticks * int64(10*time.Millisecond)
}
