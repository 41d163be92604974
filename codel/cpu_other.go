//go:build !linux

package codel

// processCPU is not measured here: workers are taken for blocked only when
// more of them are long inside a query than there are CPUs.
func processCPU() (busy int64, ok bool) { return 0, false }
