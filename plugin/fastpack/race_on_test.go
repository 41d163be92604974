//go:build race

package fastpack

const raceEnabled = true
