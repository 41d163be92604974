package alias

import (
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/codel"
)

// fakeUpstream is a real DNS server on 127.0.0.1 (UDP and TCP, one port)
// whose answers a test shapes: a function of the question.
type fakeUpstream struct {
	addr    string
	queries atomic.Int64
	tcp     atomic.Int64
}

func startUpstream(t *testing.T, answer func(w dns.ResponseWriter, r *dns.Msg) *dns.Msg) *fakeUpstream {
	t.Helper()
	var pc net.PacketConn
	var l net.Listener
	for tries := 0; l == nil; tries++ { // the UDP port may be taken for TCP
		var err error
		if pc, err = net.ListenPacket("udp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
		if l, err = net.Listen("tcp", pc.LocalAddr().String()); err != nil {
			pc.Close()
			if tries == 50 {
				t.Fatal(err)
			}
		}
	}
	u := &fakeUpstream{addr: pc.LocalAddr().String()}
	h := dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		u.queries.Add(1)
		if _, ok := w.RemoteAddr().(*net.TCPAddr); ok {
			u.tcp.Add(1)
		}
		if m := answer(w, r); m != nil {
			w.WriteMsg(m)
		}
	})
	udp, tcp := &dns.Server{PacketConn: pc, Handler: h}, &dns.Server{Listener: l, Handler: h}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() { udp.Shutdown(); tcp.Shutdown() })
	return u
}

func reply(r *dns.Msg, rrs ...string) *dns.Msg {
	m := new(dns.Msg)
	m.SetReply(r)
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil {
			panic(err)
		}
		m.Answer = append(m.Answer, rr)
	}
	return m
}

func newResolver(t *testing.T, cfg Config) *Resolver {
	t.Helper()
	if cfg.Timeout == 0 {
		cfg.Timeout = 300 * time.Millisecond
	}
	r, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(r.Close)
	return r
}

// TestUpstreamAnswersAreValidated: an answer with another question, or a
// SERVFAIL, is not used, and the next upstream is asked; a truncated one
// is asked again over TCP.
func TestUpstreamAnswersAreValidated(t *testing.T) {
	wrongQuestion := startUpstream(t, func(_ dns.ResponseWriter, r *dns.Msg) *dns.Msg {
		m := reply(r, "other.example. 60 A 203.0.113.66")
		m.Question[0].Name = "other.example."
		return m
	})
	servfail := startUpstream(t, func(_ dns.ResponseWriter, r *dns.Msg) *dns.Msg {
		m := reply(r)
		m.Rcode = dns.RcodeServerFailure
		return m
	})
	truncating := startUpstream(t, func(w dns.ResponseWriter, r *dns.Msg) *dns.Msg {
		if _, ok := w.RemoteAddr().(*net.UDPAddr); ok {
			m := reply(r)
			m.Truncated = true
			return m
		}
		return reply(r, "cdn.example. 60 A 192.0.2.7")
	})
	r := newResolver(t, Config{Upstreams: []string{wrongQuestion.addr, servfail.addr, truncating.addr}})
	res := r.Wait(NewKey("CDN.example", dns.TypeA), codel.Now())
	if res.Err != nil || len(res.RRs) != 1 || res.RRs[0].(*dns.A).A.String() != "192.0.2.7" {
		t.Fatalf("result %+v", res)
	}
	if wrongQuestion.queries.Load() != 1 || servfail.queries.Load() != 1 || truncating.tcp.Load() != 1 {
		t.Fatalf("asked: wrong question %d, servfail %d, truncating over TCP %d; want 1 each",
			wrongQuestion.queries.Load(), servfail.queries.Load(), truncating.tcp.Load())
	}

	only := newResolver(t, Config{Upstreams: []string{wrongQuestion.addr}})
	if res := only.Wait(NewKey("cdn.example.", dns.TypeA), codel.Now()); res.Err == nil || !strings.Contains(res.Err.Error(), "answered other.example.") {
		t.Fatalf("a wrong question was used: %+v", res)
	}
	if st := only.Stats(); st.Lookups[Error] != 1 {
		t.Fatalf("errors counted %d, want 1", st.Lookups[Error])
	}
}

// TestAddressesFollowTheChain: the records at the end of upstream's CNAME
// chain, with the chain's smallest TTL; none, with the SOA's negative TTL.
func TestAddressesFollowTheChain(t *testing.T) {
	up := startUpstream(t, func(_ dns.ResponseWriter, r *dns.Msg) *dns.Msg {
		switch r.Question[0].Name {
		case "lb.example.":
			return reply(r, "lb.example. 40 CNAME edge.example.", "edge.example. 300 A 192.0.2.8", "stray.example. 1 A 203.0.113.1")
		case "none.example.":
			m := reply(r)
			m.Rcode = dns.RcodeNameError
			soa, _ := dns.NewRR("example. 3600 SOA ns.example. h.example. 1 2 3 4 90")
			m.Ns = []dns.RR{soa}
			return m
		}
		return nil
	})
	r := newResolver(t, Config{Upstreams: []string{up.addr}})
	res := r.Wait(NewKey("lb.example.", dns.TypeA), codel.Now())
	if res.Err != nil || len(res.RRs) != 1 || res.TTL != 40 {
		t.Fatalf("chain: %+v", res)
	}
	res = r.Wait(NewKey("none.example.", dns.TypeA), codel.Now())
	if res.Err != nil || len(res.RRs) != 0 || res.TTL != 90 {
		t.Fatalf("NXDOMAIN target: %+v, want no records, TTL 90", res)
	}
}

// waiter records how a query came back.
type waiter struct {
	mu      sync.Mutex
	results []Result
	drops   []codel.Reason
	done    chan struct{}
}

func newWaiter() *waiter { return &waiter{done: make(chan struct{}, 64)} }

func (w *waiter) Answer(r Result) {
	w.mu.Lock()
	w.results = append(w.results, r)
	w.mu.Unlock()
	w.done <- struct{}{}
}

func (w *waiter) Drop(r codel.Reason) {
	w.mu.Lock()
	w.drops = append(w.drops, r)
	w.mu.Unlock()
	w.done <- struct{}{}
}

// TestQueriesShareOneLookupAndComeBack: queries waiting on one key share
// one upstream query; each comes back through its own queue; the answer
// is then cached for its TTL.
func TestQueriesShareOneLookupAndComeBack(t *testing.T) {
	release := make(chan struct{})
	up := startUpstream(t, func(_ dns.ResponseWriter, r *dns.Msg) *dns.Msg {
		<-release
		return reply(r, "cdn.example. 60 A 192.0.2.7")
	})
	r := newResolver(t, Config{Upstreams: []string{up.addr}})
	q := codel.New(codel.Config{Workers: 1})
	defer q.Close()
	w := newWaiter()
	for range 5 {
		if _, ok := r.Resolve(NewKey("cdn.example.", dns.TypeA), codel.Hop{Queue: q, Arrival: codel.Now()}, w); ok {
			t.Fatal("answered before the lookup")
		}
	}
	close(release)
	for range 5 {
		<-w.done
	}
	if up.queries.Load() != 1 || len(w.results) != 5 || w.results[4].RRs[0].(*dns.A).A.String() != "192.0.2.7" {
		t.Fatalf("upstream asked %d times, %d results: %+v", up.queries.Load(), len(w.results), w.results)
	}
	res, ok := r.Resolve(NewKey("cdn.example.", dns.TypeA), codel.Hop{Queue: q, Arrival: codel.Now()}, w)
	if !ok || res.TTL > 60 || res.TTL < 59 {
		t.Fatalf("not cached: %v %+v", ok, res)
	}
	st := r.Stats()
	if st.Lookups[Miss] != 1 || st.Lookups[Shared] != 4 || st.Lookups[Hit] != 1 {
		t.Fatalf("counted %v", st.Lookups)
	}
}

// TestLateOnReturnIsDropped: a query whose deadline passed while its
// lookup was away is dropped by its queue, not answered.
func TestLateOnReturnIsDropped(t *testing.T) {
	up := startUpstream(t, func(_ dns.ResponseWriter, r *dns.Msg) *dns.Msg {
		time.Sleep(150 * time.Millisecond)
		return reply(r, "cdn.example. 60 A 192.0.2.7")
	})
	r := newResolver(t, Config{Upstreams: []string{up.addr}})
	q := codel.New(codel.Config{Workers: 1, Deadline: 100 * time.Millisecond})
	defer q.Close()
	w := newWaiter()
	r.Resolve(NewKey("cdn.example.", dns.TypeA), codel.Hop{Queue: q, Arrival: codel.Now()}, w)
	<-w.done
	if len(w.drops) != 1 || w.drops[0] != codel.Deadline || len(w.results) != 0 {
		t.Fatalf("results %v, drops %v", w.results, w.drops)
	}
	if q.Stats().Drops[codel.Deadline] != 1 {
		t.Fatalf("the queue counted %v", q.Stats().Drops)
	}
}

// TestStaleAfterFailure: the last good answer, past its TTL, answers when
// the upstream fails, within ServeStale; an error without it.
func TestStaleAfterFailure(t *testing.T) {
	var fail atomic.Bool
	up := startUpstream(t, func(_ dns.ResponseWriter, r *dns.Msg) *dns.Msg {
		if fail.Load() {
			return nil // never answers: a timeout
		}
		return reply(r, "cdn.example. 1 A 192.0.2.7")
	})
	stale := newResolver(t, Config{Upstreams: []string{up.addr}, ServeStale: time.Minute, Timeout: 100 * time.Millisecond})
	plain := newResolver(t, Config{Upstreams: []string{up.addr}, Timeout: 100 * time.Millisecond})
	k := NewKey("cdn.example.", dns.TypeA)
	for _, r := range []*Resolver{stale, plain} {
		if res := r.Wait(k, codel.Now()); res.Err != nil {
			t.Fatal(res.Err)
		}
	}
	fail.Store(true)
	time.Sleep(1100 * time.Millisecond)
	if res := stale.Wait(k, codel.Now()); !res.Stale || res.TTL != staleTTL || len(res.RRs) != 1 {
		t.Fatalf("serve stale: %+v", res)
	}
	if res := plain.Wait(k, codel.Now()); res.Err == nil || !strings.Contains(res.Err.Error(), "timed out") {
		t.Fatalf("no serve stale: %+v", res)
	}
	if st := stale.Stats(); st.Lookups[Stale] != 1 || st.Lookups[Timeout] != 1 {
		t.Fatalf("counted %v", st.Lookups)
	}
}
