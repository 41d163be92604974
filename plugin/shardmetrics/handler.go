// Package shardmetrics counts the stock prometheus plugin's query metrics
// without a write that every core shares.
//
// The stock plugin (plugin/metrics) reports each query into six families
// kept once for the whole process: for each it looks the label set up
// under a read lock that every query takes, then adds to counters every
// core writes. Four allocations a query come with it: two recorders, the
// writer that names the answering plugin, and the report's options.
//
// Handler stands in for that per-query work: it counts into a shard that
// one query holds at a time, kept per P. Where a query is recycled by
// codel's socket reader it reuses its recorder with the query's other
// parts, and allocates nothing; a query without a Life (TCP, in place)
// has a recorder of its own, one allocation. Through the stock handler,
// TCP answered 0.60x Knot's queries a second (bench/README.md,
// 2026-12-06). A query without a question goes through the stock handler
// unchanged. The shards' counts reach the stock
// families' names through collectors that stand in the registry for them
// and add the shards to the stock values at each scrape: the same series,
// labels, buckets and native histograms an operator scrapes from stock
// CoreDNS. The stock plugin keeps everything else: its directive, its
// listener, its registry and the zones it names.
package shardmetrics

import (
	"context"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics"
	"github.com/coredns/coredns/plugin/pkg/rcode"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/chain"
	"github.com/ontimedns/ontime/plugin/stockerrors"
)

// Stock, set before a chain is built, leaves the stock handler in place:
// for benchmarks that measure what the stock handler costs.
var Stock bool

var (
	standOnce sync.Once
	standing  bool
)

// Wrap returns next, or, where next is the stock prometheus plugin, a
// Handler in its place. The plugins that can come just before prometheus
// in plugin.cfg's order (codel, rrl) wrap their next plugin with it.
func Wrap(next plugin.Handler) plugin.Handler {
	m, ok := next.(*metrics.Metrics)
	if !ok || Stock {
		return next
	}
	standOnce.Do(func() { standing = stand() })
	if !standing {
		return next
	}
	return &Handler{m: m, next: stockerrors.Wrap(m.Next)}
}

// Handler is the stock prometheus plugin, counting into shards.
type Handler struct {
	m     *metrics.Metrics
	next  plugin.Handler // the stock plugin's next, the stock errors plugin's stand-in in its place (plugin/stockerrors)
	zones atomic.Pointer[zoneNames]
}

// zoneNames are the stock plugin's zones as read at a time (codel.Now). The
// plugin reads them under its lock for every query; they change only when
// the auto plugin adds or removes a zone, so a Handler reads them again
// once they are zonesAge old, and a query never takes the lock.
type zoneNames struct {
	names []string
	at    int64
}

const zonesAge = int64(100 * time.Millisecond)

// Name implements plugin.Handler.
func (h *Handler) Name() string { return h.m.Name() }

// ServeDNS implements plugin.Handler: what the stock ServeDNS does.
func (h *Handler) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	if len(r.Question) == 0 {
		return h.m.ServeDNS(ctx, w, r)
	}
	hop, _ := codel.FromContext(ctx)
	qname := r.Question[0].Name // as asked: a plugin below (rewrite) may change r
	plain := strings.IndexByte(qname, '\\') < 0
	reqSize := requestLen(r, plain)
	next := h.next
	start := hop.Taken // when a worker took the query off codel's queue, where one did
	if start == 0 {
		start = codel.Now()
	}
	var rw *recorder
	if hop.Life != nil {
		rw = recorders.Get().(*recorder)
		*rw = recorder{ResponseWriter: w, start: start}
		hop.Life.AtEnd(rw) // false: it is this query's alone, never put back
	} else {
		// Without a Life (TCP, in place) nothing says when the query is
		// done with the recorder: it is the query's own, as the stock
		// plugin's are, for the garbage collector.
		rw = &recorder{ResponseWriter: w, start: start}
	}
	if next != nil {
		rw.next = next.Name()
	}
	// rw is no PluginTracker: chain.Next wraps nothing around it, and
	// fails as NextOrFailure does where there is no next plugin.
	status, err := chain.Next(h.Name(), next, ctx, rw, r)

	rc := rw.rcode
	if !plugin.ClientWrite(status) {
		rc = status
	}
	h.report(ctx, w, r, rw, qname, plain, rc, reqSize)
	return status, err
}

// report counts the query as vars.Report does.
func (h *Handler) report(ctx context.Context, w dns.ResponseWriter, r *dns.Msg, rw *recorder, qname string, plain bool, rc, reqSize int) {
	var qt uint16
	if len(r.Question) > 0 { // request.Request's QType: a plugin below may have emptied it
		qt = r.Question[0].Qtype
	}
	opt := r.IsEdns0()
	k := key{
		server: metrics.WithServer(ctx),
		zone:   h.zoneOf(qname, plain, rw.start),
		view:   metrics.WithView(ctx),
		qtype:  qtypeLabel(qt),
		rcode:  rcodeLabel(rc),
		plugin: rw.plugin,
		do:     opt != nil && opt.Do(),
	}
	k.proto, k.family = transport(w)
	took := seconds(codel.Now() - rw.start)
	hd := handles.Get().(*handle)
	s := hd.s
	s.mu.Lock()
	se := s.seriesOf(k, uint(qt)*7+uint(rc)*3+uint(len(k.zone)))
	if k.do {
		se.do++
	}
	se.requests++
	se.duration.observe(took)
	se.respSize.observeSize(rw.size)
	se.reqSize.observeSize(reqSize)
	se.rcode++
	s.mu.Unlock()
	handles.Put(hd)
}

// transport is request.Request's Proto and Family (as a label) of the
// query's writer, from one read of its remote address, where the two, and
// Do through Size, read it three times.
func transport(w dns.ResponseWriter) (proto, family string) {
	ra := w.RemoteAddr()
	if u, ok := ra.(interface{ Unwrap() net.Addr }); ok {
		if inner := u.Unwrap(); inner != nil {
			ra = inner
		}
	}
	var ip net.IP
	proto = "udp"
	switch a := ra.(type) {
	case *net.UDPAddr:
		ip = a.IP
	case *net.TCPAddr:
		proto, ip = "tcp", a.IP
	}
	if ip.To4() != nil {
		return proto, "1"
	}
	return proto, "2"
}

// rcodeNames are rcode.ToString's labels of rcodes 0 to 23 (every rcode
// miekg/dns names, and those between), by number: ToString looks each up
// in a map.
var rcodeNames = func() (names [24]string) {
	for rc := range names {
		names[rc] = rcode.ToString(rc)
	}
	return names
}()

// rcodeLabel is rcode.ToString(rc).
func rcodeLabel(rc int) string {
	if rc >= 0 && rc < len(rcodeNames) {
		return rcodeNames[rc]
	}
	return rcode.ToString(rc)
}

// zoneOf is the longest of the stock plugin's zones that holds qname, or
// the root, as the stock plugin labels it (plugin.Zones.Matches, whose
// label comparison allocates; it still judges a name with escapes).
func (h *Handler) zoneOf(qname string, plain bool, now int64) string {
	z := h.zones.Load()
	if z == nil || now-z.at > zonesAge || now < z.at {
		z = &zoneNames{names: h.m.ZoneNames(), at: now}
		h.zones.Store(z)
	}
	zone := ""
	if !plain {
		zone = plugin.Zones(z.names).Matches(qname)
	} else {
		for _, name := range z.names {
			if len(name) > len(zone) && holds(name, qname) {
				zone = name
			}
		}
	}
	if zone == "" {
		return "."
	}
	return zone
}

// holds reports whether zone, a lowercased name, holds qname, a name
// without escapes: it is qname's last labels, in any case. Such a name is
// ASCII (miekg/dns escapes every other octet), where strings.EqualFold
// folds as dns.IsSubDomain does.
func holds(zone, qname string) bool {
	if zone == "." {
		return true
	}
	if len(qname) < len(zone) {
		return false
	}
	cut := len(qname) - len(zone)
	if cut > 0 && qname[cut-1] != '.' {
		return false
	}
	// Asked in the zone's own case (lowercase) nearly always: the octets
	// compared at once, where EqualFold folds each in turn.
	return qname[cut:] == zone || strings.EqualFold(qname[cut:], zone)
}

// seconds is time.Duration(ns).Seconds(), without its division by a
// second and its remainder where ns is under one: then Seconds adds 0 to
// float64(ns)/1e9, the same float.
func seconds(ns int64) float64 {
	if ns > -1e9 && ns < 1e9 {
		return float64(ns) / 1e9
	}
	return time.Duration(ns).Seconds()
}
