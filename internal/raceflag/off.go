//go:build !race

// Package raceflag says whether the build has the race detector, for the
// tests that count allocations: the detector's instrumentation allocates,
// so they skip under it.
package raceflag

// Enabled: this build has the race detector.
const Enabled = false
