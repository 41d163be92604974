package shardmetrics

import (
	"sort"
	"strings"
	"time"

	"github.com/coredns/coredns/plugin/metrics/vars"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"google.golang.org/protobuf/types/known/timestamppb"
)

// A family stands in the registry for one of the stock plugin's query
// families: a scrape gets, for each label set, the stock vec's count (what
// CoreDNS's server and the stock handler reported) plus every shard's.
type family struct {
	stock  prometheus.Collector
	labels func(k key) []string // the label values of k's series, in the stock vec's order
	// write fills m with se's count of the family; false where se has
	// none (do, for a key without the DO bit).
	write func(se *series, m *dto.Metric) bool
	desc  *prometheus.Desc // the stock vec's
}

var families = []*family{
	{stock: vars.RequestCount, labels: func(k key) []string { return []string{k.server, k.zone, k.view, k.proto, k.family, k.qtype} },
		write: func(se *series, m *dto.Metric) bool { return counter(m, se.requests, se.created) }},
	{stock: vars.RequestDo, labels: func(k key) []string { return []string{k.server, k.zone, k.view} },
		write: func(se *series, m *dto.Metric) bool { return se.k.do && counter(m, se.do, se.created) }},
	{stock: vars.ResponseRcode, labels: func(k key) []string { return []string{k.server, k.zone, k.view, k.rcode, k.plugin} },
		write: func(se *series, m *dto.Metric) bool { return counter(m, se.rcode, se.created) }},
	{stock: vars.RequestDuration, labels: func(k key) []string { return []string{k.server, k.zone, k.view} },
		write: func(se *series, m *dto.Metric) bool { se.duration.write(m, se.created); return true }},
	{stock: vars.RequestSize, labels: func(k key) []string { return []string{k.server, k.zone, k.view, k.proto} },
		write: func(se *series, m *dto.Metric) bool { se.reqSize.write(m, se.created); return true }},
	{stock: vars.ResponseSize, labels: func(k key) []string { return []string{k.server, k.zone, k.view, k.proto} },
		write: func(se *series, m *dto.Metric) bool { se.respSize.write(m, se.created); return true }},
}

func init() {
	for _, f := range families {
		ch := make(chan *prometheus.Desc, 1)
		f.stock.Describe(ch) // a vec describes its one family
		f.desc = <-ch
	}
}

// counter fills m's counter, as a prometheus counter's Write does.
func counter(m *dto.Metric, n uint64, created time.Time) bool {
	v := float64(n)
	m.Counter = &dto.Counter{Value: &v, CreatedTimestamp: timestamppb.New(created)}
	return true
}

// stand puts the families in the stock ones' place in the registry the
// stock plugin serves (the default one). It reports false, changing
// nothing, where a stock family is not registered there.
func stand() bool {
	reg := prometheus.DefaultRegisterer
	for i, f := range families {
		if !reg.Unregister(f.stock) {
			for _, g := range families[:i] {
				reg.Unregister(g)
				reg.MustRegister(g.stock)
			}
			return false
		}
		reg.MustRegister(f)
	}
	return true
}

// Describe implements prometheus.Collector: the stock family's description.
func (f *family) Describe(ch chan<- *prometheus.Desc) { f.stock.Describe(ch) }

// Collect implements prometheus.Collector.
func (f *family) Collect(ch chan<- prometheus.Metric) {
	sum := map[string]*summed{}
	var order []string
	merge := func(desc *prometheus.Desc, d *dto.Metric) { // into the sum of d's label set
		k := labelKey(d.Label)
		if s, ok := sum[k]; ok {
			s.add(d)
			return
		}
		sum[k] = &summed{desc: desc, m: d}
		order = append(order, k)
	}
	in := make(chan prometheus.Metric)
	go func() { f.stock.Collect(in); close(in) }()
	for m := range in {
		d := new(dto.Metric)
		if m.Write(d) == nil {
			merge(m.Desc(), d)
		}
	}
	for _, s := range allShards() {
		s.mu.Lock()
		for _, se := range s.series {
			d := new(dto.Metric)
			if f.write(se, d) {
				d.Label = prometheus.MakeLabelPairs(f.desc, f.labels(se.k))
				merge(f.desc, d)
			}
		}
		s.mu.Unlock()
	}
	for _, k := range order {
		ch <- sum[k]
	}
}

func labelKey(labels []*dto.LabelPair) string {
	var b strings.Builder
	for _, l := range labels {
		b.WriteString(l.GetName())
		b.WriteByte(0)
		b.WriteString(l.GetValue())
		b.WriteByte(0)
	}
	return b.String()
}

// summed is one label set's metric, the sum of every source's.
type summed struct {
	desc *prometheus.Desc
	m    *dto.Metric
}

func (s *summed) Desc() *prometheus.Desc { return s.desc }

func (s *summed) Write(out *dto.Metric) error {
	out.Label, out.Counter, out.Histogram = s.m.Label, s.m.Counter, s.m.Histogram
	return nil
}

func (s *summed) add(d *dto.Metric) {
	if c := d.Counter; c != nil && s.m.Counter != nil {
		v := s.m.Counter.GetValue() + c.GetValue()
		s.m.Counter.Value = &v
		s.m.Counter.CreatedTimestamp = earlier(s.m.Counter.CreatedTimestamp, c.CreatedTimestamp)
	}
	if h := d.Histogram; h != nil && s.m.Histogram != nil {
		addHistogram(s.m.Histogram, h)
	}
}

// addHistogram adds h to to: the classic buckets, which every source
// shares, and the native ones, which every source keeps at one schema.
func addHistogram(to, h *dto.Histogram) {
	count, sum := to.GetSampleCount()+h.GetSampleCount(), to.GetSampleSum()+h.GetSampleSum()
	to.SampleCount, to.SampleSum = &count, &sum
	to.CreatedTimestamp = earlier(to.CreatedTimestamp, h.CreatedTimestamp)
	for i, b := range to.Bucket {
		if i < len(h.Bucket) && h.Bucket[i].GetUpperBound() == b.GetUpperBound() {
			c := b.GetCumulativeCount() + h.Bucket[i].GetCumulativeCount()
			b.CumulativeCount = &c
		}
	}
	if to.Schema == nil || h.Schema == nil || to.GetSchema() != h.GetSchema() {
		return
	}
	zero := to.GetZeroCount() + h.GetZeroCount()
	to.ZeroCount = &zero
	if len(h.PositiveDelta) > 0 {
		to.PositiveSpan, to.PositiveDelta = addNative(to.PositiveSpan, to.PositiveDelta, h.PositiveSpan, h.PositiveDelta)
	}
	if len(h.NegativeDelta) > 0 {
		to.NegativeSpan, to.NegativeDelta = addNative(to.NegativeSpan, to.NegativeDelta, h.NegativeSpan, h.NegativeDelta)
	}
}

func addNative(sp []*dto.BucketSpan, deltas []int64, hsp []*dto.BucketSpan, hdeltas []int64) ([]*dto.BucketSpan, []int64) {
	m := native(sp, deltas)
	for i, n := range native(hsp, hdeltas) {
		m[i] += n
	}
	return spans(m)
}

// earlier is the earlier of two creation times, either of which may be
// missing.
func earlier(a, b *timestamppb.Timestamp) *timestamppb.Timestamp {
	if a == nil || (b != nil && b.AsTime().Before(a.AsTime())) {
		return b
	}
	return a
}

// native reads native buckets from their spans and deltas: each span's
// offset counts from the end of the one before, each delta from the
// bucket before.
func native(sp []*dto.BucketSpan, deltas []int64) map[int]int64 {
	m := map[int]int64{}
	i, k, n := 0, 0, int64(0)
	for _, s := range sp {
		i += int(s.GetOffset())
		for j := uint32(0); j < s.GetLength() && k < len(deltas); j++ {
			n += deltas[k]
			k++
			m[i] += n
			i++
		}
	}
	return m
}

// spans writes native buckets as spans and deltas, a span for each run of
// consecutive indices.
func spans(m map[int]int64) ([]*dto.BucketSpan, []int64) {
	idx := make([]int, 0, len(m))
	for i, n := range m {
		if n != 0 {
			idx = append(idx, i)
		}
	}
	sort.Ints(idx)
	var sp []*dto.BucketSpan
	var deltas []int64
	prev, last := int64(0), 0
	for j, i := range idx {
		if j == 0 || i != last+1 {
			off := int32(i)
			if j > 0 {
				off = int32(i - last - 1)
			}
			sp = append(sp, &dto.BucketSpan{Offset: &off, Length: new(uint32)})
		}
		*sp[len(sp)-1].Length++
		deltas = append(deltas, m[i]-prev)
		prev, last = m[i], i
	}
	return sp, deltas
}
