//go:build race

package shardmetrics

const raceOn = true
