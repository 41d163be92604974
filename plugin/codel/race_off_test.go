//go:build !race

package codel

const raceOn = false
