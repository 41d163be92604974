package main

import (
	"math/bits"
	"sync/atomic"
)

// histogram counts latencies in nanoseconds in log-linear buckets: each
// power of two split into 16, so a quantile is within about 6% of the
// true value, from a nanosecond to minutes, in a fixed 1,024 counters.
type histogram struct {
	counts [64 * 16]atomic.Int64
}

func bucket(ns int64) int {
	if ns < 16 {
		return int(max(ns, 0))
	}
	e := 63 - bits.LeadingZeros64(uint64(ns)) // ns is in [2^e, 2^(e+1))
	sub := int(ns>>(e-4)) & 15                // the next four bits
	return (e-3)*16 + sub
}

// upper returns the largest value that falls in bucket i.
func upper(i int) int64 {
	if i < 16 {
		return int64(i)
	}
	e := i/16 + 3
	sub := int64(i % 16)
	return (16+sub+1)<<(e-4) - 1
}

func (h *histogram) add(ns int64) { h.counts[bucket(ns)].Add(1) }

// quantile returns the q-quantile in milliseconds (the upper bound of its
// bucket), or 0 when nothing was counted.
func (h *histogram) quantile(q float64) float64 {
	var total int64
	for i := range h.counts {
		total += h.counts[i].Load()
	}
	if total == 0 {
		return 0
	}
	rank := int64(q*float64(total-1)) + 1
	var seen int64
	for i := range h.counts {
		seen += h.counts[i].Load()
		if seen >= rank {
			return float64(upper(i)) / 1e6
		}
	}
	return 0
}
