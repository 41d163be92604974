package codel

import (
	"context"
	"fmt"
	"net"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/core/dnsserver"
	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/metrics"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/freeport"
	"github.com/ontimedns/ontime/internal/plugincfg"
	_ "github.com/ontimedns/ontime/plugin/fastpack"
	"github.com/ontimedns/ontime/plugin/shardmetrics"
	_ "github.com/ontimedns/ontime/plugin/zonestore"
)

// The chain benchmarks run ontime's full chain (fastpack, codel,
// prometheus, zonestore) in process on the load test's zone and query mix:
// a query's packet goes in where the socket reader hands it over (serve)
// and its answer comes out packed at the writer, where the socket would
// take it. What they measure is the user-space cost of a query, apart from
// the system calls (bench/README.md).
//
//	go test -run XXX -bench Chain -benchmem -cpu 1,2 ./plugin/codel/

// sink is the socket's place: it keeps nothing it is given.
type sink struct{}

var (
	local  = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 53}
	remote = &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 40000}
)

func (sink) LocalAddr() net.Addr  { return local }
func (sink) RemoteAddr() net.Addr { return remote }
func (sink) WriteMsg(m *dns.Msg) error {
	_, err := m.Pack()
	return err
}
func (sink) Write(b []byte) (int, error) { return len(b), nil }
func (sink) Close() error                { return nil }
func (sink) TsigStatus() error           { return nil }
func (sink) TsigTimersOnly(bool)         {}
func (sink) Hijack()                     {}

// chains are the Corefile bodies benchmarked: the full chain; the same
// with the stock prometheus plugin's own per-query handler (stock) in place
// of shardmetrics', to show what that saves; without prometheus, to show
// what it costs; and without fastpack as well, to show what the encoder
// saves (CoreDNS's ScrubWriter and miekg/dns's Pack instead).
//
// full-without-replay is the full chain with zonestore keeping no answer
// (replay 0): what a query costs whose answer is not kept (a first
// question, a new zone version, TCP), where full's queries, asked again,
// are written the octets kept for them.
var chains = []struct {
	name, body string
	stock      bool
	zoneOpts   string // zonestore's block, if any
}{
	{"full", " prometheus 127.0.0.1:0\n codel\n fastpack\n", false, ""},
	{"full-without-replay", " prometheus 127.0.0.1:0\n codel\n fastpack\n", false, " {\n  replay 0\n }"},
	{"full-stock-prometheus", " prometheus 127.0.0.1:0\n codel\n fastpack\n", true, ""},
	{"full-rrl", " prometheus 127.0.0.1:0\n codel\n rrl {\n  rate 100000000\n }\n fastpack\n", false, ""}, // rrl's writer runs, and never limits
	{"without-prometheus", " codel\n fastpack\n", false, ""},
	{"without-prometheus-fastpack", " codel\n", false, ""},
}

// zonestoreBlock, set before a server is started, is the block of its
// zonestore line (a chain's zoneOpts).
var zonestoreBlock string

// chainServerOf is chainServerQueries for one of chains.
func chainServerOf(b testing.TB, c int, n int) (*packetContext, [][]byte) {
	zonestoreBlock = chains[c].zoneOpts
	defer func() { zonestoreBlock = "" }()
	return chainServerQueries(b, chains[c].body, chains[c].stock, n)
}

// chainServer starts a chain from a Corefile body (and zonestore), as the
// binary would, with the directives in plugin.cfg's order, and returns the
// context its queries run under and the packed query mix: 4,096 queries,
// few enough that what they touch stays in the caches.
func chainServer(b testing.TB, body string, stock bool) (*packetContext, [][]byte) {
	return chainServerQueries(b, body, stock, 4096)
}

// chainServerQueries is chainServer with n queries of the mix.
func chainServerQueries(b testing.TB, body string, stock bool, n int) (*packetContext, [][]byte) {
	shardmetrics.Stock = stock
	defer func() { shardmetrics.Stock = false }()
	r := startServer(b, body, "", workload.Zone(50000), workload.Origin)
	s, q := r.server, r.c.q
	var life *codel.Life // as the reader: a Life for each query where it recycles
	if r.recycle {
		life = new(codel.Life)
	}
	var packed [][]byte
	for _, q := range workload.Queries(50000, n) {
		m := new(dns.Msg)
		m.SetQuestion(q.Name, dns.StringToType[q.Type])
		m.RecursionDesired = false
		p, err := m.Pack()
		if err != nil {
			b.Fatal(err)
		}
		packed = append(packed, p)
	}
	return &packetContext{Context: context.Background(), server: s, route: r.route, questionless: r.questionless,
		hop: codel.Hop{Queue: q, Arrival: 1, Life: life}}, packed
}

// startServer starts a server on 127.0.0.1 from a Corefile body, with
// zonestore last serving zone (its text) as origin, and more server blocks
// after it (PORT in them is the server's port), and returns the reader of
// its UDP socket.
func startServer(b testing.TB, body, more, zone, origin string) *reader {
	return startServerOn(b, "127.0.0.1", body, more, zone, origin)
}

// startServerOn is startServer on the address bind ("": none, every
// address of both families, as a Corefile that binds nothing).
func startServerOn(b testing.TB, bind, body, more, zone, origin string) *reader {
	f, err := os.Open("../../plugin.cfg")
	if err != nil {
		b.Fatal(err)
	}
	plugins, err := plugincfg.Parse(f)
	f.Close()
	if err != nil {
		b.Fatal(err)
	}
	saved, quiet := dnsserver.Directives, dnsserver.Quiet
	b.Cleanup(func() { dnsserver.Directives, dnsserver.Quiet = saved, quiet })
	dnsserver.Quiet = true // no banner in the benchmark's output
	dnsserver.Directives = nil
	for _, p := range plugins {
		dnsserver.Directives = append(dnsserver.Directives, p.Name)
	}
	file := b.TempDir() + "/db.zone"
	if err := os.WriteFile(file, []byte(zone), 0o644); err != nil {
		b.Fatal(err)
	}
	if bind != "" {
		bind = " bind " + bind + "\n"
	}
	// A free port (codel finds its socket by the address it is bound to),
	// free for TCP too. Tests running beside this one open connections
	// from ephemeral ports, the range a free port comes from: one may take
	// it before the server binds it, and then another port is tried.
	var port int
	var inst *caddy.Instance
	for try := 0; ; try++ {
		port = freeport.Get(b)
		corefile := fmt.Sprintf(".:%d {\n%s%s zonestore %s %s%s\n}\n", port, bind, body, file, origin, zonestoreBlock) +
			strings.ReplaceAll(more, "PORT", fmt.Sprint(port))
		if inst, err = caddy.Start(caddy.CaddyfileInput{Contents: []byte(corefile), ServerTypeName: "dns"}); err == nil {
			break
		}
		if try == 4 || !strings.Contains(err.Error(), "address already in use") {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() { inst.ShutdownCallbacks(); inst.Stop() })
	// The server is the one whose socket codel reads, once it serves.
	return readerOn(b, fmt.Sprint(port))
}

// readerOn waits for codel to read the socket of the server on port, with
// every socket of its own it opens there, and returns its first reader.
// Until the last is open the server's goroutine is still reading the
// server's plugins (recyclable), and a test that ended then would put
// CoreDNS's directives back under it (startServer's cleanup).
func readerOn(tb testing.TB, port string) *reader {
	tb.Helper()
	for try := 0; try < 500; try++ {
		time.Sleep(10 * time.Millisecond)
		queues.mu.Lock()
		for c := range queues.instances {
			if rs := c.readers.Load(); rs != nil && len(*rs) > 0 && strings.HasSuffix((*rs)[0].server.Addr, ":"+port) &&
				((*rs)[0].undo == nil || len(*rs) >= c.sockets) {
				queues.mu.Unlock()
				return (*rs)[0]
			}
		}
		queues.mu.Unlock()
	}
	tb.Fatal("codel reads no server's socket")
	return nil
}

// BenchmarkChain serves the mix one query after another.
func BenchmarkChain(b *testing.B) {
	for i, c := range chains {
		b.Run(c.name, func(b *testing.B) {
			s, packed := chainServerOf(b, i, 4096)
			serveInTurn(b, s, packed)
		})
	}
}

// serveInTurn serves packed one query after another, in one worker's room.
func serveInTurn(b *testing.B, s *packetContext, packed [][]byte) {
	b.ReportAllocs()
	b.ResetTimer()
	room := new(nameRoom)
	for i := 0; b.Loop(); i++ {
		serveOne(s, packed[i%len(packed)], sink{}, room)
	}
}

// BenchmarkChainCold is the full chain over the load test's 200,000
// queries, which reach every name of the zone: what a query touches is
// mostly not in the caches, as under load (see zonestore's
// BenchmarkLookupCold).
func BenchmarkChainCold(b *testing.B) {
	for i, c := range chains {
		if c.name != "full" && c.name != "full-without-replay" && c.name != "without-prometheus" {
			continue // the chains ontime runs, with and without its metrics, and without replay
		}
		b.Run(c.name, func(b *testing.B) {
			s, packed := chainServerOf(b, i, 200000)
			serveInTurn(b, s, packed)
		})
	}
}

// BenchmarkChainFlood is the full chain, with and without its metrics,
// over names the zone lacks, each asked once: a label of six hex digits
// under the apex, the query's number, as loadgen writes it for load.sh's
// FLOOD=100 (a random-subdomain flood). Every query is a new question,
// answered NXDOMAIN, whose answer is never asked for again: what a query
// costs that nothing kept can spare.
func BenchmarkChainFlood(b *testing.B) {
	for i, c := range chains {
		if c.name != "full" && c.name != "without-prometheus" {
			continue
		}
		b.Run(c.name, func(b *testing.B) {
			s, _ := chainServerOf(b, i, 1)
			m := new(dns.Msg)
			m.SetQuestion("000000."+workload.Origin, dns.TypeA)
			m.RecursionDesired = false
			q, err := m.Pack()
			if err != nil {
				b.Fatal(err)
			}
			label := q[13:19] // after the header and the label's length
			b.ReportAllocs()
			room := new(nameRoom)
			for n := 0; b.Loop(); n++ {
				for d := range label {
					label[d] = "0123456789abcdef"[n>>(20-4*d)&15]
				}
				serveOne(s, q, sink{}, room)
			}
		})
	}
}

// serveOne serves m as a worker does: in a packet from the pool, under a
// context made for it, its name made in the worker's room (nil: none),
// the packet kept again when the query ends.
func serveOne(template *packetContext, m []byte, w dns.ResponseWriter, room *nameRoom) {
	p := packetPool.Get().(*packet)
	p.ctx = *template
	p.req.names = room
	if p.ctx.hop.Life != nil {
		p.ctx.hop.Life = &p.life
	}
	serve(&p.ctx, m, w, &p.req, &p.sw)
	p.end()
}

// BenchmarkChainParallel serves it from every P at once (-cpu 1,2): it
// scales only if no query writes memory that every other query writes.
func BenchmarkChainParallel(b *testing.B) {
	for i, c := range chains {
		b.Run(c.name, func(b *testing.B) {
			s, packed := chainServerOf(b, i, 4096)
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				room := new(nameRoom) // each goroutine a worker
				for i := 0; pb.Next(); i++ {
					serveOne(s, packed[i%len(packed)], sink{}, room)
				}
			})
		})
	}
}
