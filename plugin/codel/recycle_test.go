package codel

import (
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/whoami"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
	_ "github.com/ontimedns/ontime/plugin/alias"
)

// TestRecyclingIsOnForTheExample: the reader recycles on the chains ontime
// ships (Corefile.example's and the Kubernetes ConfigMap's plugins): if a
// CoreDNS upgrade hides the server's blocks from configsOf, this fails
// rather than every query allocating again, unseen.
func TestRecyclingIsOnForTheExample(t *testing.T) {
	body := " errors\n log . \"{type}\"\n prometheus 127.0.0.1:0\n codel\n fastpack\n alias {\n  upstream 127.0.0.1:9\n }\n"
	if r := startServer(t, body, "", workload.Zone(100), workload.Origin); !r.recycle {
		t.Fatal("the reader does not recycle on ontime's own chain")
	}
}

// TestRecyclingIsOffWithCache: the stock cache plugin goes on with a query
// on a goroutine of its own (prefetch): where it is in the chain, or in
// another server block on the same socket, the reader recycles nothing.
func TestRecyclingIsOffWithCache(t *testing.T) {
	for name, c := range map[string]struct{ body, more string }{
		"in the chain":     {body: " codel\n fastpack\n cache\n"},
		"in another block": {body: " codel\n fastpack\n", more: "other.test:PORT {\n bind 127.0.0.1\n cache\n whoami\n}\n"},
	} {
		t.Run(name, func(t *testing.T) {
			if r := startServer(t, c.body, c.more, workload.Zone(100), workload.Origin); r.recycle {
				t.Fatal("the reader recycles beside the cache plugin")
			}
		})
	}
}

// TestHeldQueriesKeepTheirOwn: queries held by alias while their lookups
// are away (each the first, or a sharer, of a lookup over loopback to a
// real upstream) interleave with plain queries whose packets, writers and
// answers are recycled; every answer still carries its own ID, name and
// addresses. Under -race (make test), a held query's memory reused by
// another would also show as a race.
func TestHeldQueriesKeepTheirOwn(t *testing.T) {
	const names = 150
	address := func(i int) net.IP { return net.IPv4(10, 0, byte(i/256), byte(i%256)) }
	// The upstream answers tN.up.test with 10.0.N, after a millisecond, so
	// that lookups overlap the plain queries.
	up := &dns.Server{Addr: "127.0.0.1:0", Net: "udp", Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		time.Sleep(time.Millisecond)
		m := new(dns.Msg)
		m.SetReply(r)
		var i int
		if _, err := fmt.Sscanf(r.Question[0].Name, "t%d.up.test.", &i); err == nil && r.Question[0].Qtype == dns.TypeA {
			m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 1}, A: address(i)}}
		}
		w.WriteMsg(m)
	})}
	started := make(chan struct{})
	up.NotifyStartedFunc = func() { close(started) }
	go up.ListenAndServe()
	<-started
	defer up.Shutdown()

	zone := []string{"$ORIGIN held.test.", "@ 300 SOA ns hostmaster 1 7200 3600 1209600 120", "@ 300 NS ns", "ns 300 A 192.0.2.53"}
	for i := range names {
		zone = append(zone, fmt.Sprintf("a%d 300 ALIAS t%d.up.test.", i, i), fmt.Sprintf("w%d 300 A %s", i, address(1000+i)))
	}
	body := fmt.Sprintf(" codel\n fastpack\n alias {\n  upstream %s\n }\n", up.PacketConn.LocalAddr())
	r := startServer(t, body, "", strings.Join(zone, "\n")+"\n", "held.test.")
	if !r.recycle {
		t.Fatal("the reader does not recycle: nothing here would be tested")
	}
	server := r.server.Addr[len("dns://"):]

	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for c := range 8 {
		wg.Go(func() {
			client := &dns.Client{Timeout: 2 * time.Second}
			for k := range 2 * names {
				i := (k/2 + c*17) % names
				name, want := fmt.Sprintf("w%d.held.test.", i), address(1000+i)
				if k%2 == 0 {
					name, want = fmt.Sprintf("a%d.held.test.", i), address(i)
				}
				m := new(dns.Msg)
				m.SetQuestion(name, dns.TypeA)
				res, _, err := client.Exchange(m, server) // checks the ID
				if err != nil {
					errs <- fmt.Errorf("%s: %v", name, err)
					return
				}
				if len(res.Question) != 1 || res.Question[0].Name != name || len(res.Answer) != 1 {
					errs <- fmt.Errorf("%s: answered\n%v", name, res)
					return
				}
				if a, ok := res.Answer[0].(*dns.A); !ok || a.Hdr.Name != name || !a.A.Equal(want) {
					errs <- fmt.Errorf("%s: answered %v, want %s", name, res.Answer[0], want)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}
