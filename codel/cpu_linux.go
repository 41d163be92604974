//go:build linux

package codel

import (
	"bytes"
	"os"
	"strconv"
)

// processCPU returns, summed over the process's threads, the time they
// ran and the time they waited, runnable, for a CPU (nanoseconds, from
// /proc/self/task/*/schedstat). A thread that waits for a CPU wants one:
// on a host shared with other processes, CPU time alone would count the
// time they take as idle. ok is false when schedstat cannot be read.
func processCPU() (run, wait int64, ok bool) {
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		return 0, 0, false
	}
	for _, t := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + t.Name() + "/schedstat")
		if err != nil {
			continue // the thread exited
		}
		f := bytes.Fields(b)
		if len(f) < 2 {
			return 0, 0, false
		}
		r, err1 := strconv.ParseInt(string(f[0]), 10, 64)
		w, err2 := strconv.ParseInt(string(f[1]), 10, 64)
		if err1 != nil || err2 != nil {
			return 0, 0, false
		}
		run += r
		wait += w
	}
	return run, wait, true
}
