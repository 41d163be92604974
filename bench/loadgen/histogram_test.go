package main

import (
	"math"
	"testing"
)

func TestBucketBounds(t *testing.T) {
	for _, ns := range []int64{0, 1, 15, 16, 17, 31, 32, 1000, 123456, 1e9, 3e11} {
		i := bucket(ns)
		if ns > upper(i) || (i > 0 && ns <= upper(i-1)) {
			t.Errorf("%d ns in bucket %d, which holds (%d, %d]", ns, i, upper(i-1), upper(i))
		}
		if ns >= 16 && float64(upper(i)-ns)/float64(ns) > 1.0/16 {
			t.Errorf("%d ns: bucket %d's upper bound %d is more than 1/16 above", ns, i, upper(i))
		}
	}
}

func TestQuantiles(t *testing.T) {
	var h histogram
	for i := int64(1); i <= 1000; i++ {
		h.add(i * 1000) // 1 µs to 1 ms
	}
	for _, c := range []struct{ q, want float64 }{{0.5, 0.5}, {0.9, 0.9}, {0.99, 0.99}} {
		if got := h.quantile(c.q); math.Abs(got-c.want)/c.want > 1.0/16 {
			t.Errorf("q%.2f = %.4f ms, want %.4f within 1/16", c.q, got, c.want)
		}
	}
	var empty histogram
	if empty.quantile(0.5) != 0 {
		t.Error("empty histogram has a quantile")
	}
}
