package shardmetrics

import (
	"context"
	"fmt"
	"math"
	"net"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	"github.com/coredns/coredns/plugin/pkg/rcode"
	"github.com/miekg/dns"
	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/raceflag"
)

// writer is the socket's place: it keeps nothing it is given, and says
// where the query came from.
type writer struct{ remote net.Addr }

func (w writer) LocalAddr() net.Addr         { return &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53} }
func (w writer) RemoteAddr() net.Addr        { return w.remote }
func (w writer) WriteMsg(m *dns.Msg) error   { return nil }
func (w writer) Write(b []byte) (int, error) { return len(b), nil }
func (w writer) Close() error                { return nil }
func (w writer) TsigStatus() error           { return nil }
func (w writer) TsigTimersOnly(bool)         {}
func (w writer) Hijack()                     {}

// answers is the plugin after prometheus: what it does depends on the
// first label of the name asked, so that the metrics meet every way a
// plugin can end a query.
type answers struct{}

func (answers) Name() string { return "answers" }
func (answers) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	m := new(dns.Msg)
	m.SetReply(r)
	switch strings.SplitN(r.Question[0].Name, ".", 2)[0] {
	case "nx":
		m.Rcode = dns.RcodeNameError
		return dns.RcodeNameError, w.WriteMsg(m)
	case "fail": // an error the server answers, nothing written here
		return dns.RcodeServerFailure, nil
	case "silent": // written later, or never: nothing written, success
		return dns.RcodeSuccess, nil
	case "twice": // two messages (prefetch): the sizes add up
		w.WriteMsg(m)
		m.Rcode = dns.RcodeRefused
		return dns.RcodeSuccess, w.WriteMsg(m)
	case "renamed": // as the rewrite plugin leaves the query: the name changed
		r.Question[0].Name = "www.elsewhere.net."
		r.Question[0].Qtype = dns.TypeAAAA
		return dns.RcodeSuccess, w.WriteMsg(m)
	case "raw":
		b, _ := m.Pack()
		_, err := w.Write(b)
		return dns.RcodeSuccess, err
	}
	for i := 0; i < len(r.Question[0].Name)%7; i++ {
		m.Answer = append(m.Answer, &dns.TXT{Hdr: dns.RR_Header{Name: r.Question[0].Name,
			Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 60}, Txt: []string{strings.Repeat("x", 40*i)}})
	}
	return dns.RcodeSuccess, w.WriteMsg(m)
}

// query is one query of the mix, and where it comes from.
type query struct {
	r      *dns.Msg
	remote net.Addr
	view   string
}

// mix is a query mix that meets every label the query families have.
func mix() []query {
	v4 := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 5353}
	v6 := &net.UDPAddr{IP: net.IPv6loopback, Port: 5353}
	tcp := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 3), Port: 5353}
	var qs []query
	i := 0
	for _, first := range []string{"www", "nx", "fail", "silent", "twice", "raw", "renamed", "a-longer-label"} {
		for _, zone := range []string{"example.org.", "sub.example.org.", "EXAMPLE.org.", "elsewhere.net."} {
			for _, t := range []uint16{dns.TypeA, dns.TypeAAAA, dns.TypeMX, dns.TypeNSEC3, dns.TypeHTTPS, dns.TypeANY, 999, dns.TypeCAA} {
				for _, remote := range []net.Addr{v4, v6, tcp} {
					i++
					r := new(dns.Msg)
					r.SetQuestion(first+"."+zone, t)
					if i%3 == 0 {
						r.SetEdns0(1232, i%2 == 0)
					}
					view := ""
					if i%5 == 0 {
						view = "inside"
					}
					qs = append(qs, query{r, remote, view})
				}
			}
		}
	}
	return qs
}

// newStock returns the stock plugin, as its setup makes it, for two zones,
// with answers after it.
func newStock() *metrics.Metrics {
	m := metrics.New("127.0.0.1:0")
	m.AddZone("example.org.")
	m.AddZone("sub.example.org.")
	m.Next = answers{}
	return m
}

func contextOf(q query, life *codel.Life) context.Context {
	ctx := context.WithValue(context.Background(), dnsserver.Key{}, &dnsserver.Server{Addr: "dns://:1053"})
	if q.view != "" {
		ctx = context.WithValue(ctx, dnsserver.ViewKey{}, q.view)
	}
	if life != nil {
		ctx = codel.NewContext(ctx, codel.Hop{Life: life})
	}
	return ctx
}

// serve runs the mix through h, as codel's reader runs it: a Life each
// query, ended when the chain returns.
func serve(t testing.TB, h plugin.Handler, qs []query) {
	var life codel.Life
	for _, q := range qs {
		h.ServeDNS(contextOf(q, &life), writer{q.remote}, q.r.Copy())
		if life.End() {
			t.Fatal("a query is held")
		}
	}
}

// shardRequests is the requests every shard counted.
func shardRequests() (n uint64) {
	shards.mu.Lock()
	defer shards.mu.Unlock()
	for _, s := range shards.all {
		s.mu.Lock()
		for _, se := range s.series {
			n += se.requests
		}
		s.mu.Unlock()
	}
	return n
}

// serveInPlace runs the mix through h as a TCP connection's goroutine
// does: in place, without a Life.
func serveInPlace(h plugin.Handler, qs []query) {
	for _, q := range qs {
		h.ServeDNS(contextOf(q, nil), writer{q.remote}, q.r.Copy())
	}
}

// snapshot is every value of the query families a scrape of the default
// registry shows, by metric and label set: counters' values, histograms'
// counts, sums, classic buckets and native buckets.
type snapshot map[string]float64

func scrape(t testing.TB) snapshot {
	t.Helper()
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		t.Fatal(err)
	}
	s := snapshot{}
	for _, mf := range mfs {
		name := mf.GetName()
		if !strings.HasPrefix(name, "coredns_dns_") {
			continue
		}
		for _, m := range mf.Metric {
			id := name + "{" + labelKey(m.Label) + "}"
			if c := m.Counter; c != nil {
				s[id] = c.GetValue()
			}
			if h := m.Histogram; h != nil {
				s[id+" count"] = float64(h.GetSampleCount())
				s[id+" sum"] = h.GetSampleSum()
				for _, b := range h.Bucket {
					s[fmt.Sprintf("%s le=%g", id, b.GetUpperBound())] = float64(b.GetCumulativeCount())
				}
				s[id+" zero"] = float64(h.GetZeroCount())
				for i, n := range native(h.PositiveSpan, h.PositiveDelta) {
					s[fmt.Sprintf("%s +%d", id, i)] = float64(n)
				}
				for i, n := range native(h.NegativeSpan, h.NegativeDelta) {
					s[fmt.Sprintf("%s -%d", id, i)] = float64(n)
				}
			}
		}
	}
	return s
}

// minus is what s counts beyond before.
func (s snapshot) minus(before snapshot) snapshot {
	d := snapshot{}
	for k, v := range s {
		if v-before[k] != 0 {
			d[k] = v - before[k]
		}
	}
	return d
}

// timed reports whether k is a value that depends on how long a query
// took: the duration histogram's sum, buckets and native buckets.
func timed(k string) bool {
	return strings.HasPrefix(k, "coredns_dns_request_duration_seconds") && !strings.HasSuffix(k, " count")
}

// TestShardsCountAsStock runs one mix through the stock handler and then
// through the shards, and finds that each added the same to every series
// a scrape shows: counters, histogram counts, sums and buckets, classic
// and native. Only the durations differ, but not their counts. The shards
// count so with a Life (queries codel's reader recycles) and without one
// (TCP, in place).
func TestShardsCountAsStock(t *testing.T) {
	t.Run("recycled", func(t *testing.T) { shardsCountAsStock(t, func(h plugin.Handler, qs []query) { serve(t, h, qs) }) })
	t.Run("in-place", func(t *testing.T) { shardsCountAsStock(t, serveInPlace) })
}

func shardsCountAsStock(t *testing.T, serveShards func(plugin.Handler, []query)) {
	m := newStock()
	h, ok := Wrap(m).(*Handler)
	if !ok {
		t.Fatal("Wrap left the stock plugin in place")
	}
	qs := mix()
	before := scrape(t)
	serve(t, m, qs)
	mid := scrape(t)
	counted := shardRequests()
	serveShards(h, qs)
	after := scrape(t)
	asked := 0
	for _, q := range qs {
		if len(q.r.Question) > 0 {
			asked++
		}
	}
	if n := shardRequests() - counted; n != uint64(asked) {
		t.Fatalf("the shards counted %d of the %d queries with a question", n, asked)
	}

	stock, shards := mid.minus(before), after.minus(mid)
	if len(stock) == 0 {
		t.Fatal("the stock handler counted nothing")
	}
	for k, v := range stock {
		if !timed(k) && shards[k] != v {
			t.Errorf("%s: stock %g, shards %g", k, v, shards[k])
		}
	}
	for k, v := range shards {
		if _, ok := stock[k]; !ok && !timed(k) {
			t.Errorf("%s: only the shards count it (%g)", k, v)
		}
	}
	// Both kinds of source add up in one series.
	for k, v := range after.minus(before) {
		if !timed(k) && math.Abs(v-2*stock[k]) > 1e-9 {
			t.Errorf("%s: %g after both runs, not twice %g", k, v, stock[k])
		}
	}
	// The mix met every kind of label.
	for _, want := range []string{`plugin=answers`, `plugin=` + "\x00", `rcode=NXDOMAIN`, `rcode=SERVFAIL`, `rcode=REFUSED`,
		`type=other`, `type=HTTPS`, `proto=tcp`, `family=2`, `view=inside`, `zone=.` + "\x00", `zone=sub.example.org.`, `coredns_dns_do_requests_total`} {
		found := false
		for k := range shards {
			if strings.Contains(k, strings.ReplaceAll(want, "=", "\x00")) {
				found = true
			}
		}
		if !found {
			t.Errorf("no series has %q", want)
		}
	}
}

// TestDurationFromTaken: a query a worker took off codel's queue is timed
// from then (the hop's Taken), not from when the handler began.
func TestDurationFromTaken(t *testing.T) {
	h := Wrap(newStock())
	q := query{r: new(dns.Msg).SetQuestion("www.example.org.", dns.TypeA), remote: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 9), Port: 1}}
	sum := `coredns_dns_request_duration_seconds{` + labelKey([]*dto.LabelPair{
		pair("server", "dns://:1053"), pair("view", ""), pair("zone", "example.org.")}) + `} sum`
	before := scrape(t)[sum]
	var life codel.Life
	ctx := context.WithValue(context.Background(), dnsserver.Key{}, &dnsserver.Server{Addr: "dns://:1053"})
	ctx = codel.NewContext(ctx, codel.Hop{Life: &life, Taken: codel.Now() - int64(3*time.Second)})
	h.ServeDNS(ctx, writer{q.remote}, q.r.Copy())
	life.End()
	if took := scrape(t)[sum] - before; took < 3 || took > 60 {
		t.Errorf("timed %gs, taken 3 s before", took)
	}
}

// TestShardsLoseNoCount counts from many goroutines at once (so from many
// shards) with garbage collections between, which drop the pool's handles
// and bring their shards back idle: every query is counted, and shards are
// used again rather than made without end.
func TestShardsLoseNoCount(t *testing.T) {
	m := newStock()
	h := Wrap(m)
	q := query{r: new(dns.Msg).SetQuestion("www.example.org.", dns.TypeA), remote: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 9), Port: 1}}
	series := `coredns_dns_requests_total{` + labelKey([]*dto.LabelPair{
		pair("family", "1"), pair("proto", "udp"), pair("server", "dns://:1053"), pair("type", "A"),
		pair("view", ""), pair("zone", "example.org.")}) + `}`
	before := scrape(t)[series]
	const goroutines, rounds, each = 8, 20, 50
	for round := 0; round < rounds; round++ {
		var wg sync.WaitGroup
		for g := 0; g < goroutines; g++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				serve(t, h, []query{q, q, q, q, q, q, q, q, q, q}[:10])
				for i := 0; i < each-10; i++ {
					serve(t, h, []query{q})
				}
			}()
		}
		wg.Wait()
		runtime.GC()
	}
	if got := scrape(t)[series] - before; got != goroutines*rounds*each {
		t.Errorf("counted %g queries, made %d", got, goroutines*rounds*each)
	}
	// Under the race detector the pool drops handles on purpose.
	if n := len(allShards()); n > 4*goroutines && !raceflag.Enabled {
		t.Errorf("%d shards for %d goroutines", n, goroutines)
	}
}

func pair(name, value string) *dto.LabelPair { return &dto.LabelPair{Name: &name, Value: &value} }

// TestHandlerDoesNotAllocate: a query the shards have met before costs no
// allocation of the metrics' own.
func TestHandlerDoesNotAllocate(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	m := newStock()
	m.Next = plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		return dns.RcodeSuccess, w.WriteMsg(r)
	})
	h := Wrap(m) // reads m.Next: the chain is built from its end
	q := query{r: new(dns.Msg).SetQuestion("www.example.org.", dns.TypeA), remote: &net.UDPAddr{IP: net.IPv4(127, 0, 0, 9), Port: 1}}
	var life codel.Life
	ctx := contextOf(q, &life)
	var w dns.ResponseWriter = writer{q.remote}
	if n := testing.AllocsPerRun(1000, func() {
		h.ServeDNS(ctx, w, q.r)
		life.End()
	}); n != 0 {
		t.Errorf("%g allocations a query", n)
	}
}

// TestHoldsIsMatches holds the zone match to the stock one on names in
// every case and at every label boundary.
func TestHoldsIsMatches(t *testing.T) {
	zones := []string{".", "org.", "example.org.", "sub.example.org.", "xample.org.", "e.org."}
	for _, name := range []string{".", "org.", "ORG.", "example.org.", "Example.Org.", "www.example.org.",
		"wwwexample.org.", "sub.example.org.", "a.sub.EXAMPLE.org.", "xsub.example.org.", "e.org.", "ee.org.",
		"example.net.", "a.b.c.d.e.f.", "org.example.", "xample.org.", "-.org."} {
		for _, z := range zones {
			if got, want := holds(z, name), dns.IsSubDomain(z, name); got != want {
				t.Errorf("holds(%q, %q) = %v, dns.IsSubDomain %v", z, name, got, want)
			}
		}
	}
}

// TestSecondsIsDurationSeconds: the duration observed is the float the
// stock plugin's time.Since(start).Seconds() gives, at every magnitude and
// at the edges of the shortcut.
func TestSecondsIsDurationSeconds(t *testing.T) {
	ns := []int64{0, 1, -1, 999_999_999, -999_999_999, 1e9, -1e9, 1e9 + 1, math.MaxInt64, math.MinInt64}
	for v := int64(1); v < math.MaxInt64/3; v = v*3 + 1 {
		ns = append(ns, v, v+1, -v)
	}
	for i := int64(0); i < 100_000; i++ {
		ns = append(ns, i*7919, i*104_729_113)
	}
	for _, n := range ns {
		if got, want := seconds(n), time.Duration(n).Seconds(); got != want {
			t.Fatalf("seconds(%d) = %v, Seconds %v", n, got, want)
		}
	}
}

func TestRcodeLabelIsToString(t *testing.T) {
	for rc := -2; rc < 5000; rc++ {
		if got, want := rcodeLabel(rc), rcode.ToString(rc); got != want {
			t.Errorf("rcodeLabel(%d) = %q, rcode.ToString %q", rc, got, want)
		}
	}
}

// TestZonesReadAgain: the stock plugin's zones change only when the auto
// plugin adds or removes one; a Handler sees the change once what it read
// is zonesAge old.
func TestZonesReadAgain(t *testing.T) {
	m := newStock()
	h := Wrap(m).(*Handler)
	const t0 = int64(1e18)
	if z := h.zoneOf("www.new.org.", true, t0); z != "." {
		t.Fatalf("www.new.org. is in %q before new.org. is a zone", z)
	}
	m.AddZone("new.org.")
	if z := h.zoneOf("www.new.org.", true, t0+zonesAge/2); z != "." {
		t.Errorf("the zones were read again before they were %d ns old: %q", zonesAge, z)
	}
	if z := h.zoneOf("www.new.org.", true, t0+zonesAge+1); z != "new.org." {
		t.Errorf("www.new.org. is in %q after new.org. was added", z)
	}
	m.RemoveZone("new.org.")
	if z := h.zoneOf("www.new.org.", true, t0+2*zonesAge+2); z != "." {
		t.Errorf("www.new.org. is in %q after new.org. was removed", z)
	}
	if z := h.zoneOf("WWW.Sub.Example.ORG.", true, t0+2*zonesAge+2); z != "sub.example.org." {
		t.Errorf("WWW.Sub.Example.ORG. is in %q", z)
	}
}

// BenchmarkHandler reports the test mix's queries through the stock
// handler and through the shards, from every P at once (-cpu 1,2): the
// stock handler's label lookups and counters are shared by every query.
//
//	go test -run XXX -bench Handler -benchmem -cpu 1,2 ./plugin/shardmetrics/
func BenchmarkHandler(b *testing.B) {
	qs := mix()
	next := plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		return dns.RcodeSuccess, w.WriteMsg(r)
	})
	for _, c := range []struct {
		name string
		wrap func(*metrics.Metrics) plugin.Handler
	}{
		{"stock", func(m *metrics.Metrics) plugin.Handler { return m }},
		{"shards", func(m *metrics.Metrics) plugin.Handler { return Wrap(m) }},
	} {
		b.Run(c.name, func(b *testing.B) {
			m := newStock()
			m.Next = next
			h := c.wrap(m)
			b.ReportAllocs()
			b.RunParallel(func(pb *testing.PB) {
				var life codel.Life
				ctxs := make([]context.Context, len(qs))
				ws := make([]dns.ResponseWriter, len(qs))
				for i, q := range qs {
					ctxs[i], ws[i] = contextOf(q, &life), writer{q.remote}
				}
				for i := 0; pb.Next(); i++ {
					j := i % len(qs)
					h.ServeDNS(ctxs[j], ws[j], qs[j].r)
					life.End()
				}
			})
		})
	}
}

// BenchmarkHandlerOneZone reports the server's case through the shards,
// one query after another: UDP over IPv4, one zone, the bench mix's
// types (A the most), NOERROR answers of two records and NXDOMAIN, each
// query taken off codel's queue (Hop.Taken set, so one clock read a
// query). What the metrics cost a query with every cache warm.
//
//	go test -run XXX -bench HandlerOneZone -benchmem -cpuprofile cpu.prof ./plugin/shardmetrics/
func BenchmarkHandlerOneZone(b *testing.B) {
	from := &net.UDPAddr{IP: net.IPv4(127, 0, 0, 2), Port: 5353}
	var qs []*dns.Msg
	replies := map[*dns.Msg]*dns.Msg{}
	for _, name := range []string{"www", "mail", "host1", "host22", "nx1", "nx2", "a.b"} {
		for _, t := range []uint16{dns.TypeA, dns.TypeA, dns.TypeA, dns.TypeAAAA, dns.TypeMX, dns.TypeSOA, dns.TypeTXT} {
			r := new(dns.Msg)
			r.SetQuestion(name+".example.org.", t)
			m := new(dns.Msg)
			m.SetReply(r)
			if strings.HasPrefix(name, "nx") {
				m.Rcode = dns.RcodeNameError
			} else {
				rr, err := dns.NewRR(r.Question[0].Name + " 300 IN A 192.0.2.1")
				if err != nil {
					b.Fatal(err)
				}
				m.Answer = []dns.RR{rr, rr}
			}
			qs, replies[r] = append(qs, r), m
		}
	}
	m := newStock()
	m.Next = plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
		return dns.RcodeSuccess, w.WriteMsg(replies[r])
	})
	h := Wrap(m)
	var life codel.Life
	ctx := codel.NewContext(context.WithValue(context.Background(), dnsserver.Key{}, &dnsserver.Server{Addr: "dns://:1053"}),
		codel.Hop{Life: &life, Taken: codel.Now()})
	var w dns.ResponseWriter = writer{from}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		h.ServeDNS(ctx, w, qs[i%len(qs)])
		life.End()
	}
}
