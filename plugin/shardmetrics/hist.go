package shardmetrics

import (
	"math"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// hist counts observations as the stock plugin's histograms do
// (prometheus.NewHistogramVec with classic buckets and a native bucket
// factor): classic buckets at the same bounds, native buckets at the same
// schema and zero threshold, count and sum. A prometheus histogram lets any
// core observe at any time, at the cost of five atomic additions and a
// sync.Map lookup an observation; a hist is written by its shard's holder
// alone, under the shard's lock, with plain additions, and read by scrapes
// under the same lock. TestHistIsPrometheus holds the two to the same
// counts on the same observations.
type hist struct {
	kind    *histKind
	classic []uint64 // by bucket, not cumulative; the last is +Inf's
	count   uint64
	sum     float64
	zero    uint64 // native: observations within the zero threshold
	// native counts observations by native bucket index: dense over the
	// kind's usual range, in more (made when first needed) elsewhere.
	native        []uint64
	more, negated map[int]int64 // negated: negative values' buckets
}

// histKind is what the histograms of one family share: the classic bounds
// and the dense range of native buckets, from lo on.
type histKind struct {
	bounds []float64
	lo     int
	dense  int
	// small are the buckets of the whole numbers below smallSizes, found
	// once, for the sizes a query observes (observeSize): a table read
	// instead of a search of the classic bounds and of the native ones.
	small []smallBuckets
}

// smallBuckets are a whole number's classic bucket and dense native one
// (its index in hist.native; -1 for zero, which is in the zero bucket).
type smallBuckets struct {
	classic uint8
	native  int16
}

// smallSizes: request sizes (a question and an OPT record) and most
// response sizes are below it.
const smallSizes = 1024

var (
	schema    = pickSchema(plugin.NativeHistogramBucketFactor)
	fracs     = nativeBounds(schema)
	threshold = prometheus.DefNativeHistogramZeroThreshold // the stock histograms leave the zero threshold unset
)

// The dense ranges hold the usual values of each family: durations from
// 2^-24 s (60 ns) to 2^8 s, sizes from 1 octet to 2^17.
var (
	durationKind = newKind(plugin.TimeBuckets, -24, 8)
	sizeKind     = newKind(sizeBuckets, 0, 17).withSmall()
)

// newKind makes the kind of histograms with classic bounds and dense
// native buckets for values from 2^loExp to 2^hiExp.
func newKind(bounds []float64, loExp, hiExp int) *histKind {
	if n := len(bounds); n > 0 && math.IsInf(bounds[n-1], 1) {
		bounds = bounds[:n-1] // +Inf is implicit, as prometheus has it
	}
	lo := nativeKey(math.Ldexp(1, loExp))
	return &histKind{bounds: bounds, lo: lo, dense: nativeKey(math.Ldexp(1, hiExp)) - lo + 1}
}

// withSmall fills k.small; k's dense native range must hold 1 to
// smallSizes-1 (sizeKind's holds 2^0 to 2^17).
func (k *histKind) withSmall() *histKind {
	k.small = make([]smallBuckets, smallSizes)
	for v := range k.small {
		k.small[v] = smallBuckets{classic: uint8(k.bucket(float64(v))), native: -1}
		if v > 0 {
			k.small[v].native = int16(nativeKey(float64(v)) - k.lo)
		}
	}
	return k
}

func newHist(k *histKind) hist {
	return hist{kind: k, classic: make([]uint64, len(k.bounds)+1), native: make([]uint64, k.dense)}
}

// observe counts v, as prometheus's histogram.Observe does.
func (h *hist) observe(v float64) {
	h.classic[h.kind.bucket(v)]++
	h.sum += v
	h.count++
	if math.IsNaN(v) {
		return // in no native bucket
	}
	switch {
	case v > threshold:
		k := nativeKey(v)
		if i := k - h.kind.lo; i >= 0 && i < len(h.native) {
			h.native[i]++
			return
		}
		h.more = addTo(h.more, k)
	case v < -threshold:
		h.negated = addTo(h.negated, nativeKey(v))
	default:
		h.zero++
	}
}

// observeSize counts n octets, as observe(float64(n)) does.
func (h *hist) observeSize(n int) {
	if n < 0 || n >= len(h.kind.small) {
		h.observe(float64(n))
		return
	}
	b := h.kind.small[n]
	h.classic[b.classic]++
	h.sum += float64(n)
	h.count++
	if b.native < 0 {
		h.zero++
		return
	}
	h.native[b.native]++
}

// addTo adds one to m[k], making m if it is nil.
func addTo(m map[int]int64, k int) map[int]int64 {
	if m == nil {
		m = map[int]int64{}
	}
	m[k]++
	return m
}

// bucket is v's classic bucket, as histogram.findBucket finds it (NaN in
// +Inf's).
func (k *histKind) bucket(v float64) int {
	for i, b := range k.bounds {
		if v <= b {
			return i
		}
	}
	return len(k.bounds)
}

// nativeKey is the index of the native bucket of |v| at schema, as
// histogramCounts.observe computes it (±Inf as MaxFloat64's next).
func nativeKey(v float64) int {
	inf := math.IsInf(v, 0)
	if inf {
		v = math.MaxFloat64
	}
	frac, exp := math.Frexp(math.Abs(v))
	var key int
	if schema > 0 {
		// sort.SearchFloat64s(fracs, frac), without its closure calls.
		i, j := 0, len(fracs)
		for i < j {
			if h := int(uint(i+j) >> 1); fracs[h] < frac {
				i = h + 1
			} else {
				j = h
			}
		}
		key = i + (exp-1)*len(fracs)
	} else {
		key = exp
		if frac == 0.5 {
			key--
		}
		offset := (1 << -schema) - 1
		key = (key + offset) >> -schema
	}
	if inf {
		key++
	}
	return key
}

// write fills m's histogram, as prometheus's histogram.Write does, created
// at created.
func (h *hist) write(m *dto.Metric, created time.Time) {
	count, sum, zero, sch, zt := h.count, h.sum, h.zero, schema, threshold
	out := &dto.Histogram{SampleCount: &count, SampleSum: &sum, CreatedTimestamp: timestamppb.New(created),
		ZeroThreshold: &zt, Schema: &sch, ZeroCount: &zero}
	var cum uint64
	for i, b := range h.kind.bounds {
		cum += h.classic[i]
		c, ub := cum, b
		out.Bucket = append(out.Bucket, &dto.Bucket{CumulativeCount: &c, UpperBound: &ub})
	}
	pos := map[int]int64{}
	for i, n := range h.native {
		if n > 0 {
			pos[h.kind.lo+i] = int64(n)
		}
	}
	for k, n := range h.more {
		pos[k] += n
	}
	out.PositiveSpan, out.PositiveDelta = spans(pos)
	out.NegativeSpan, out.NegativeDelta = spans(h.negated)
	m.Histogram = out
}

// pickSchema is prometheus's: the largest schema from -4 to 8 whose bucket
// growth, 2^(2^-schema), is at most factor.
func pickSchema(factor float64) int32 {
	floor := math.Floor(math.Log2(math.Log2(factor)))
	switch {
	case floor <= -8:
		return 8
	case floor >= 4:
		return -4
	}
	return -int32(floor)
}

// nativeBounds are the bounds of the fractions (in [0.5, 1)) of values in
// each native bucket of an octave at schema, made as prometheus's
// nativeHistogramBounds were: each schema's bounds are every second one of
// the next's, and the others are their neighbour times the growth factor.
func nativeBounds(schema int32) []float64 {
	if schema <= 0 {
		return nil
	}
	all := [][]float64{{0.5}}
	for i := 1; i <= int(schema); i++ {
		prev, factor := all[i-1], math.Exp2(math.Exp2(float64(-i)))
		bounds := []float64{0.5}
		for j := 0; j < 2*len(prev)-1; j++ {
			if (j+1)%2 == 0 {
				bounds = append(bounds, prev[j/2+1])
			} else {
				bounds = append(bounds, bounds[j]*factor)
			}
		}
		all = append(all, bounds)
	}
	return all[schema]
}
