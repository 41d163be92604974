//go:build !race

package zonestore

const raceEnabled = false
