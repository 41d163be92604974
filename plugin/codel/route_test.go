package codel

import (
	"bytes"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"runtime"
	"strings"
	"testing"

	"github.com/coredns/coredns/plugin"
	_ "github.com/coredns/coredns/plugin/erratic"
	_ "github.com/coredns/coredns/plugin/metadata"
	_ "github.com/coredns/coredns/plugin/view"
	_ "github.com/coredns/coredns/plugin/whoami"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/raceflag"
)

// recorder is the socket's place: it keeps the bytes of what it is given.
type recorder struct{ got []byte }

func (*recorder) LocalAddr() net.Addr  { return local }
func (*recorder) RemoteAddr() net.Addr { return remote }
func (w *recorder) WriteMsg(m *dns.Msg) error {
	b, err := m.Pack()
	w.got = append(w.got, b...)
	return err
}
func (w *recorder) Write(b []byte) (int, error) { w.got = append(w.got, b...); return len(b), nil }
func (*recorder) Close() error                  { return nil }
func (*recorder) TsigStatus() error             { return nil }
func (*recorder) TsigTimersOnly(bool)           {}
func (*recorder) Hijack()                       {}

// routed are server blocks on one socket of every kind the router meets:
// a plain one at the root (zonestore, for example.org), one with another
// chain under it, one with no plugins, one with a metadata collector, one
// behind a view, and a zone two blocks share through a view.
const routed = `sub.example.org:PORT {
 bind 127.0.0.1
 whoami
}
empty.example.org:PORT {
 bind 127.0.0.1
}
meta.example.org:PORT {
 bind 127.0.0.1
 metadata
 whoami
}
filtered.example.org:PORT {
 bind 127.0.0.1
 view onlya {
  expr type() == 'A'
 }
 whoami
}
viewed.example.org:PORT {
 bind 127.0.0.1
 view inside {
  expr type() == 'A'
 }
 whoami
}
viewed.example.org:PORT {
 bind 127.0.0.1
 erratic {
  drop 0
 }
}
`

// zoneChain is a chain that says which zone it was routed for.
type zoneChain string

func (zoneChain) Name() string { return "zone" }
func (zoneChain) ServeDNS(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
	return 0, nil
}

// TestRouterSkipsLongerSuffixes: a name's suffixes longer than every zone
// are not looked up, and each name goes to the chain that looking every
// suffix up finds: for the root alone (a server of ".", the usual, whose
// router is checked too), one zone, a zone that is a suffix of another's
// name, zones inside zones, on names in and out of them, in any case, with
// escaped dots that are not label boundaries.
func TestRouterSkipsLongerSuffixes(t *testing.T) {
	r := startServer(t, " codel\n fastpack\n", "", "$ORIGIN example.org.\n@ 300 SOA ns1 hostmaster 1 7200 3600 1209600 300\n", "example.org.")
	if r.route == nil || r.route.longest != 1 {
		t.Fatalf("a server of the one zone . looks up suffixes longer than it (%+v)", r.route)
	}
	names := []string{"www.example.org.", "WWW.Example.ORG.", "example.org.", "org.", ".", `a\.example.org.`, `x.a\.org.`,
		"xexample.org.", "example.org.uk.", "elsewhere.net.", "a.b.c.d.e.f.example.org.", `example\.org.`, "sub.example.org.", "x.sub.example.org."}
	for _, zones := range [][]string{{"."}, {"example.org."}, {"org."}, {"sub.example.org."}, {"sub.example.org.", "example.org."},
		{"org.", "sub.example.org.", "."}, {`a\.example.org.`, "example.org."}} {
		skips, every := &router{zones: map[string]plugin.Handler{}}, &router{zones: map[string]plugin.Handler{}}
		for _, z := range zones {
			skips.add(z, zoneChain(z))
			every.add(z, zoneChain(z))
		}
		every.longest = 255 // looks every suffix up
		for _, name := range names {
			m := new(dns.Msg).SetQuestion(name, dns.TypeA)
			if got, want := skips.route(m), every.route(m); got != want {
				t.Errorf("zones %v, name %s: routed to %v, looking every suffix up to %v", zones, name, got, want)
			}
		}
	}
}

// TestRouterIsServeDNS: for every query of a mix that meets each of
// Server.ServeDNS's cases, the router either leaves the query to it or
// hands it to the chain Server.ServeDNS hands it to: the answer written is
// the same, byte for byte. The plain cases are routed here, and the others
// are not.
func TestRouterIsServeDNS(t *testing.T) {
	zone := "$ORIGIN example.org.\n$TTL 300\n@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ NS ns1\nns1 A 192.0.2.53\nwww A 192.0.2.1\na\\.b A 192.0.2.2\n"
	r := startServer(t, " codel\n fastpack\n", routed, zone, "example.org.")
	if r.route == nil {
		t.Fatal("the server's blocks cannot be read: nothing is routed here")
	}
	queries := []routeQuery{
		{"www.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{"WWW.Example.ORG.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, 0, true},
		{"a\\.b.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{"nx.example.org.", dns.TypeAAAA, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{"example.org.", dns.TypeNS, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{"elsewhere.net.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{".", dns.TypeNS, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{"a.sub.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{"SUB.example.org.", dns.TypeTXT, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{"example.org.", dns.TypeSOA, dns.ClassINET, dns.OpcodeNotify, -1, true},
		{"example.org.", dns.TypeDS, dns.ClassINET, dns.OpcodeQuery, -1, false},
		{"sub.example.org.", dns.TypeDS, dns.ClassINET, dns.OpcodeQuery, -1, false},
		{"www.example.org.", dns.TypeA, dns.ClassCHAOS, dns.OpcodeQuery, -1, false},
		{"www.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeUpdate, -1, false},
		{"www.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, 1, false},
		{"x.empty.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, false},
		{"x.meta.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, false},
		{"x.filtered.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, false},
		{"x.filtered.example.org.", dns.TypeAAAA, dns.ClassINET, dns.OpcodeQuery, -1, false},
		{"viewed.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, false},
		{"x.viewed.example.org.", dns.TypeAAAA, dns.ClassINET, dns.OpcodeQuery, -1, false},
	}
	routesAsServeDNS(t, r, queries)
}

// routeQuery is a query, and whether the router should take it (routed)
// rather than leave it to Server.ServeDNS.
type routeQuery struct {
	name   string
	qtype  uint16
	class  uint16
	opcode int
	edns   int // -1: none; else the OPT's version
	routed bool
}

// routesAsServeDNS asks r's router to route each query, and finds that it
// takes those it should, and that what the chain it chose writes is what
// Server.ServeDNS writes for the same query.
func routesAsServeDNS(t *testing.T, r *reader, queries []routeQuery) {
	t.Helper()
	for i, q := range queries {
		m := new(dns.Msg)
		m.SetQuestion(q.name, q.qtype)
		m.Id, m.Question[0].Qclass, m.Opcode = uint16(i+1), q.class, q.opcode
		if q.edns >= 0 {
			m.SetEdns0(1232, false)
			m.IsEdns0().SetVersion(uint8(q.edns))
		}
		ctx := &packetContext{Context: context.Background(), server: r.server, route: r.route, hop: codel.Hop{Queue: r.c.q, Arrival: r.c.now()}}
		h := r.route.route(m)
		if (h != nil) != q.routed {
			t.Errorf("%s %s class %d opcode %d EDNS %d: routed here %v, want %v", q.name, dns.TypeToString[q.qtype], q.class, q.opcode, q.edns, h != nil, q.routed)
		}
		want := new(recorder)
		r.server.ServeDNS(ctx, want, m.Copy())
		if len(want.got) == 0 {
			t.Errorf("%s: the server wrote nothing", q.name)
		}
		if h == nil {
			continue
		}
		got := new(recorder)
		var sw request.ScrubWriter
		serveRouted(ctx, h, got, m.Copy(), &sw)
		if !bytes.Equal(got.got, want.got) {
			a, b := new(dns.Msg), new(dns.Msg)
			a.Unpack(got.got)
			b.Unpack(want.got)
			t.Errorf("%s %s: routed here\n%v\nServer.ServeDNS\n%v", q.name, dns.TypeToString[q.qtype], a, b)
		}
	}
}

// TestRootOnlyServerRoutesAsServeDNS: a server of the root zone alone (the
// usual ".:53 { ... }") routes every query of class INET, opcode QUERY or
// NOTIFY, not DS and of EDNS version 0 to its chain without looking at the
// name, long names with capitals included, and the chain writes what
// Server.ServeDNS writes.
func TestRootOnlyServerRoutesAsServeDNS(t *testing.T) {
	zone := "$ORIGIN example.org.\n$TTL 300\n@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ NS ns1\nns1 A 192.0.2.53\nwww A 192.0.2.1\na\\.b A 192.0.2.2\n"
	r := startServer(t, " codel\n fastpack\n", "", zone, "example.org.")
	if r.route == nil || r.route.root == nil || r.route.longest != 1 {
		t.Fatal("the server of the root zone alone is not routed here")
	}
	long := strings.Repeat("\\255", 62) + "." + strings.Repeat("A", 60) + ".example.org." // over 256 octets as text, with capitals
	routesAsServeDNS(t, r, []routeQuery{
		{"www.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{"WWW.Example.ORG.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, 0, true},
		{"a\\.b.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{long, dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{"elsewhere.net.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{".", dns.TypeNS, dns.ClassINET, dns.OpcodeQuery, -1, true},
		{"example.org.", dns.TypeSOA, dns.ClassINET, dns.OpcodeNotify, -1, true},
		{"example.org.", dns.TypeDS, dns.ClassINET, dns.OpcodeQuery, -1, false},
		{"www.example.org.", dns.TypeA, dns.ClassCHAOS, dns.OpcodeQuery, -1, false},
		{"www.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeUpdate, -1, false},
		{"www.example.org.", dns.TypeA, dns.ClassINET, dns.OpcodeQuery, 1, false},
	})
}

// TestRoutedQueryPanics: a panic in a chain a query was routed to here is
// answered with SERVFAIL, as Server.ServeDNS answers it.
func TestRoutedQueryPanics(t *testing.T) {
	r := startServer(t, " codel\n", "", "$ORIGIN example.org.\n@ 300 SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ 300 NS ns1\nns1 300 A 192.0.2.53\n", "example.org.")
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	got := new(recorder)
	var sw request.ScrubWriter
	ctx := &packetContext{Context: context.Background(), server: r.server, route: r.route}
	serveRouted(ctx, panics{}, got, m, &sw)
	a := new(dns.Msg)
	if err := a.Unpack(got.got); err != nil || a.Rcode != dns.RcodeServerFailure || a.Id != m.Id {
		t.Fatalf("after a panic: %v %v", a, err)
	}
}

type panics struct{}

func (panics) Name() string { return "panics" }
func (panics) ServeDNS(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
	panic(fmt.Sprint("a plugin's bug"))
}

// TestFullChainAllocatesAlmostNothing: the full chain (prometheus, codel,
// fastpack, zonestore) on the load test's zone and query mix, served as a
// worker serves it, allocates less than once in twenty queries: a block of
// the worker's room for question names now and then, and what the pools
// and the encoder's memory of names make while they grow, after a
// collection. Issue 7's target is one allocation a query at most; held
// here on the exact average (testing.AllocsPerRun and the benchmarks'
// allocs/op round it down).
func TestFullChainAllocatesAlmostNothing(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	template, packed := chainServer(t, chains[0].body, false)
	room := new(nameRoom)
	serveAll := func(passes int) {
		for i := 0; i < passes*len(packed); i++ {
			serveOne(template, packed[i%len(packed)], sink{}, room)
		}
	}
	serveAll(2) // every name met: the shards' label sets, the encoder's memory, the answers' arrays
	runtime.GC()
	serveAll(1) // the pools refilled from what the collection set aside
	// The process's count: other tests' servers, shutting down, allocate
	// too, now and then. The least of five passes is this chain's.
	least := math.Inf(1)
	for range 5 {
		least = min(least, float64(mallocs(func() { serveAll(1) }))/float64(len(packed)))
	}
	if n := least; n > 0.05 {
		t.Errorf("%.3f allocations a query", n)
	}
}

// mallocs returns how many allocations the process made while f ran,
// exactly: testing.AllocsPerRun and the benchmarks' allocs/op round an
// average down.
func mallocs(f func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	f()
	runtime.ReadMemStats(&after)
	return after.Mallocs - before.Mallocs
}

// TestLoweredIsToLower: lowered makes what strings.ToLower makes of a name
// of ASCII, and refuses any other.
func TestLoweredIsToLower(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	alphabet := "aZ.-\\09qQxX_*\x00\x7f"
	for n := 0; n < 20000; n++ {
		b := make([]byte, rng.IntN(260))
		for i := range b {
			b[i] = alphabet[rng.IntN(len(alphabet))]
		}
		if n%10 == 0 && len(b) > 0 {
			b[rng.IntN(len(b))] = byte(0x80 + rng.IntN(0x80))
		}
		name := string(b)
		var buf [256]byte
		got, ok := lowered(name, &buf)
		ascii := !strings.ContainsFunc(name, func(r rune) bool { return r >= 0x80 })
		want := strings.ToLower(name)
		if ascii && len(name) <= len(buf) && (!ok || got != want) || !ascii && ok {
			t.Fatalf("lowered(%q) = %q, %v; strings.ToLower %q", name, got, ok, want)
		}
	}
}
