//go:build race

package raceflag

// Enabled: this build has the race detector.
const Enabled = true
