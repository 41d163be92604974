package shardmetrics

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// TestHistIsPrometheus observes the same values into a hist and into a
// prometheus histogram made as the stock plugin makes its own, and finds
// the same count, sum, classic buckets and native buckets in both: values
// spread over many octaves on both sides of zero, values at the classic
// bounds and at the native ones, within the zero threshold, the
// infinities, and NaN.
func TestHistIsPrometheus(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	var values []float64
	for range 20000 {
		v := math.Exp2(rng.Float64()*80 - 50) // 2^-50 to 2^30
		if rng.IntN(10) == 0 {
			v = -v
		}
		values = append(values, v)
	}
	for _, b := range append(append([]float64{}, plugin.TimeBuckets...), sizeBuckets...) {
		values = append(values, b, math.Nextafter(b, math.Inf(1)), math.Nextafter(b, math.Inf(-1)))
	}
	for e := -30; e <= 20; e++ {
		for _, f := range fracs {
			b := math.Ldexp(f, e)
			values = append(values, b, math.Nextafter(b, math.Inf(1)), math.Nextafter(b, math.Inf(-1)), -b)
		}
	}
	values = append(values, 0, threshold, -threshold, threshold/2, math.Nextafter(threshold, 1))

	for _, c := range []struct {
		name string
		kind *histKind
		vals []float64
	}{
		{"duration", durationKind, values},
		{"size", sizeKind, values},
		{"infinities", durationKind, []float64{1, math.Inf(1), 2, math.Inf(-1), 3}},
		{"NaN", sizeKind, []float64{1, math.NaN(), 300}},
	} {
		t.Run(c.name, func(t *testing.T) {
			want := prometheus.NewHistogram(prometheus.HistogramOpts{Name: "h", Help: "h",
				Buckets: c.kind.bounds, NativeHistogramBucketFactor: plugin.NativeHistogramBucketFactor})
			got := newHist(c.kind)
			for _, v := range c.vals {
				want.Observe(v)
				got.observe(v)
			}
			var w, g dto.Metric
			if err := want.Write(&w); err != nil {
				t.Fatal(err)
			}
			got.write(&g, time.Time{})
			sameHistogram(t, w.Histogram, g.Histogram)
		})
	}
}

func sameHistogram(t *testing.T, w, g *dto.Histogram) {
	t.Helper()
	if w.GetSampleCount() != g.GetSampleCount() {
		t.Errorf("count %d, prometheus %d", g.GetSampleCount(), w.GetSampleCount())
	}
	if ws, gs := w.GetSampleSum(), g.GetSampleSum(); ws != gs && !(math.IsNaN(ws) && math.IsNaN(gs)) {
		t.Errorf("sum %g, prometheus %g", gs, ws)
	}
	if len(w.Bucket) != len(g.Bucket) {
		t.Fatalf("%d classic buckets, prometheus %d", len(g.Bucket), len(w.Bucket))
	}
	for i := range w.Bucket {
		if w.Bucket[i].GetUpperBound() != g.Bucket[i].GetUpperBound() || w.Bucket[i].GetCumulativeCount() != g.Bucket[i].GetCumulativeCount() {
			t.Errorf("classic bucket %d: %g %d, prometheus %g %d", i, g.Bucket[i].GetUpperBound(), g.Bucket[i].GetCumulativeCount(),
				w.Bucket[i].GetUpperBound(), w.Bucket[i].GetCumulativeCount())
		}
	}
	if w.GetSchema() != g.GetSchema() || w.GetZeroThreshold() != g.GetZeroThreshold() || w.GetZeroCount() != g.GetZeroCount() {
		t.Errorf("schema %d, zero threshold %g, zero count %d; prometheus %d, %g, %d",
			g.GetSchema(), g.GetZeroThreshold(), g.GetZeroCount(), w.GetSchema(), w.GetZeroThreshold(), w.GetZeroCount())
	}
	for _, side := range []struct {
		name         string
		wsp, gsp     []*dto.BucketSpan
		wdelta, gdel []int64
	}{
		{"positive", w.PositiveSpan, g.PositiveSpan, w.PositiveDelta, g.PositiveDelta},
		{"negative", w.NegativeSpan, g.NegativeSpan, w.NegativeDelta, g.NegativeDelta},
	} {
		wn, gn := nonzero(native(side.wsp, side.wdelta)), nonzero(native(side.gsp, side.gdel))
		if len(wn) == 0 && side.name == "positive" {
			t.Error("prometheus counted nothing in its positive native buckets")
		}
		for k, n := range wn {
			if gn[k] != n {
				t.Errorf("%s native bucket %d: %d, prometheus %d", side.name, k, gn[k], n)
			}
		}
		for k, n := range gn {
			if _, ok := wn[k]; !ok {
				t.Errorf("%s native bucket %d: %d, prometheus none", side.name, k, n)
			}
		}
	}
}

func nonzero(m map[int]int64) map[int]int64 {
	for k, n := range m {
		if n == 0 {
			delete(m, k)
		}
	}
	return m
}

// TestObserveSizeIsObserve: a size counted through the table of small
// sizes, or past it, lands where observe puts the same number.
func TestObserveSizeIsObserve(t *testing.T) {
	want, got := newHist(sizeKind), newHist(sizeKind)
	for n := -2; n < 3*smallSizes; n++ {
		for range n%3 + 1 { // a few of each, not all alike
			want.observe(float64(n))
			got.observeSize(n)
		}
	}
	for _, n := range []int{65535, 70000, 1 << 20} {
		want.observe(float64(n))
		got.observeSize(n)
	}
	var w, g dto.Metric
	want.write(&w, time.Time{})
	got.write(&g, time.Time{})
	sameHistogram(t, w.Histogram, g.Histogram)
	if !slices.Equal(want.native, got.native) || !slices.Equal(want.classic, got.classic) || want.zero != got.zero {
		t.Errorf("native %v\nwant %v\nclassic %v, want %v; zero %d, want %d", got.native, want.native, got.classic, want.classic, got.zero, want.zero)
	}
}
