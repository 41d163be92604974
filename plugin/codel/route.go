package codel

import (
	"reflect"
	"runtime/debug"
	"time"
	"unsafe"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/metrics/vars"
	"github.com/coredns/coredns/plugin/pkg/rcode"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/ahead"
	"github.com/ontimedns/ontime/internal/swar"
)

// A router hands a query read here to its server block's chain as
// CoreDNS's Server.ServeDNS does, without the two allocations that costs a
// query: the ScrubWriter it wraps the writer in (here kept in the packet)
// and the request it hands the block's filter functions (here there are
// none). It does so only where routing is nothing but finding the longest
// zone that holds the name: a query of class INET and opcode QUERY or
// NOTIFY, not a DS query, without an EDNS version the server refuses, to a
// zone served by one server block with a chain, no filter functions, no
// view and no metadata collector. Every other query, and every query of a
// server in debug mode, goes to Server.ServeDNS as before;
// TestRouterIsServeDNS holds the two to the same choice.
type router struct {
	// zones maps each zone the server serves to its block's chain, or to
	// nil where the zone's blocks are of any other kind: Server.ServeDNS
	// decides those.
	zones      map[string]plugin.Handler
	stacktrace bool
	// longest is the length of the longest zone: a suffix of a name that
	// is longer names none, and is not looked up. A server of the one zone
	// "." (the usual ".:53 { ... }") looks up nothing but it.
	longest int
	root    plugin.Handler // the root's chain, where a server serves it: what a name of no other zone goes to
	// warmer is the one plugin of the server's blocks that warms the
	// queries a worker will serve next (warm.go); nil where there is
	// none, or more than one.
	warmer ahead.Warmer
}

// add routes zone to h.
func (rt *router) add(zone string, h plugin.Handler) {
	rt.zones[zone] = h
	rt.longest = max(rt.longest, len(zone))
	if zone == "." {
		rt.root = h
	}
}

// routerOf reads s's table of server blocks (serverZones); nil where it
// cannot, or where s is in debug mode (a panic is not recovered there).
func routerOf(s *dnsserver.Server) *router {
	v := reflect.ValueOf(s).Elem()
	zones, dbg, stack := serverZones(s), v.FieldByName("debug"), v.FieldByName("stacktrace")
	if zones == nil || !dbg.IsValid() || dbg.Kind() != reflect.Bool || dbg.Bool() ||
		!stack.IsValid() || stack.Kind() != reflect.Bool {
		return nil
	}
	rt := &router{zones: map[string]plugin.Handler{}, stacktrace: stack.Bool(), warmer: warmerOf(configsOf(s))}
	for zone, list := range zones {
		var h plugin.Handler
		if len(list) == 1 {
			h = plainChain(list[0])
		}
		rt.add(zone, h)
	}
	return rt
}

// plainChain returns c's chain where the server hands it every query
// routed to c as it is: no filter functions, no view, no metadata
// collector; nil otherwise.
func plainChain(c *dnsserver.Config) plugin.Handler {
	if len(c.FilterFuncs) > 0 || c.ViewName != "" {
		return nil
	}
	v := reflect.ValueOf(c).Elem()
	meta, chain := v.FieldByName("metaCollector"), v.FieldByName("pluginChain")
	if !meta.IsValid() || meta.Kind() != reflect.Interface || !meta.IsNil() ||
		!chain.IsValid() || chain.Type() != reflect.TypeFor[plugin.Handler]() {
		return nil
	}
	return *(*plugin.Handler)(unsafe.Pointer(chain.UnsafeAddr()))
}

// route returns the chain r goes to, or nil: Server.ServeDNS decides.
func (rt *router) route(r *dns.Msg) plugin.Handler {
	if rt == nil || len(r.Question) == 0 {
		return nil
	}
	q := r.Question[0]
	if q.Qclass != dns.ClassINET || (r.Opcode != dns.OpcodeQuery && r.Opcode != dns.OpcodeNotify) ||
		(q.Qtype == dns.TypeDS && r.Opcode == dns.OpcodeQuery) {
		return nil
	}
	if o := r.IsEdns0(); o != nil && o.Version() != 0 {
		return nil
	}
	if rt.longest == 1 {
		// The root is the server's one zone (".:53 { ... }", the usual
		// Corefile): every name is in it, and Server.ServeDNS, whose
		// search of the name's suffixes ends at the root, would choose
		// its chain too.
		return rt.root
	}
	var buf [256]byte
	name, ok := lowered(q.Name, &buf)
	if !ok {
		return nil
	}
	for off, end := 0, false; !end; off, end = dns.NextLabel(name, off) {
		if len(name)-off > rt.longest {
			continue
		}
		if h, ok := rt.zones[name[off:]]; ok {
			return h
		}
	}
	return rt.root // nil where absent: the server refuses
}

// lowered is name in lower case, as strings.ToLower makes it of a name of
// ASCII (every name miekg/dns unpacks), in buf where name has capitals;
// false for a name with other octets or too long for buf.
func lowered(name string, buf *[256]byte) (string, bool) {
	upper := false
	for k := 0; k < len(name); k += 8 { // eight octets at a time
		w := swar.Word(name, k)
		if w&0x8080808080808080 != 0 {
			return "", false
		}
		upper = upper || swar.Lower(w) != w
	}
	if !upper {
		return name, true
	}
	if len(name) > len(buf) {
		return "", false
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf[i] = c
	}
	return unsafe.String(&buf[0], len(name)), true
}

// serveRouted serves r on chain h, found by ctx.route, as Server.ServeDNS
// does once it has found h: through sw, a ScrubWriter around w, an rcode
// the chain did not write written here, a panic answered with SERVFAIL and
// counted.
func serveRouted(ctx *packetContext, h plugin.Handler, w dns.ResponseWriter, r *dns.Msg, sw *request.ScrubWriter) {
	*sw = *request.NewScrubWriter(r, w)
	defer func() {
		if rec := recover(); rec != nil {
			addr := ctx.server.Addr
			if ctx.route.stacktrace {
				log.Errorf("Recovered from panic in server: %q %v\n%s", addr, rec, string(debug.Stack()))
			} else {
				log.Errorf("Recovered from panic in server: %q %v", addr, rec)
			}
			vars.Panic.Inc()
			answer := errorAnswer(sw, r, dns.RcodeServerFailure)
			vars.Report(addr, request.Request{W: sw, Req: r}, vars.Dropped, "", rcode.ToString(dns.RcodeServerFailure), "", answer.Len(), time.Now())
			sw.WriteMsg(answer)
		}
	}()
	if rc, _ := h.ServeDNS(ctx, sw, r); !plugin.ClientWrite(rc) {
		sw.WriteMsg(errorAnswer(sw, r, rc))
	}
}

// errorAnswer is the server's answer of rcode rc to r, as CoreDNS's server
// and miekg/dns's make it: the question echoed, EDNS as the query's.
func errorAnswer(w dns.ResponseWriter, r *dns.Msg, rc int) *dns.Msg {
	answer := new(dns.Msg)
	answer.SetRcode(r, rc)
	state := request.Request{W: w, Req: r}
	state.SizeAndDo(answer)
	return answer
}
