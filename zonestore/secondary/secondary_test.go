package secondary

import (
	"net"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// primary is a real DNS server on 127.0.0.1 whose transfers a test
// writes: what it answers to an SOA query, an AXFR and an IXFR.
type primary struct {
	askLog
	addr string
	soa  uint32
	axfr []dns.RR
	ixfr []dns.RR
}

func rrs(t testing.TB, texts ...string) []dns.RR {
	var out []dns.RR
	for _, s := range texts {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, rr)
	}
	return out
}

func soa(serial string) string {
	return "example.test. 300 SOA ns1.example.test. h.example.test. " + serial + " 3600 1 600 300"
}

// serve answers with h over UDP and TCP on one port of 127.0.0.1 until
// the test ends, and returns the address.
func serve(t *testing.T, h dns.Handler) string {
	addr, _ := serveCounting(t, h, nil)
	return addr
}

// countingListener counts the TCP connections a server accepts.
type countingListener struct {
	net.Listener
	accepted atomic.Int32
}

func (l *countingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.accepted.Add(1)
	}
	return c, err
}

// serveCounting is serve, with the TSIG secrets keys, and the listener
// that counts the TCP connections it takes.
func serveCounting(t testing.TB, h dns.Handler, keys map[string]string) (string, *countingListener) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var pc net.PacketConn
	for pc == nil {
		if pc, err = net.ListenPacket("udp", l.Addr().String()); err != nil {
			l.Close()
			if l, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
				t.Fatal(err)
			}
		}
	}
	counted := &countingListener{Listener: l}
	udp := &dns.Server{PacketConn: pc, Handler: h, TsigSecret: keys}
	tcp := &dns.Server{Listener: counted, Handler: h, TsigSecret: keys}
	go udp.ActivateAndServe()
	go tcp.ActivateAndServe()
	t.Cleanup(func() { udp.Shutdown(); tcp.Shutdown() })
	return l.Addr().String(), counted
}

func startPrimary(t *testing.T) *primary {
	t.Helper()
	p := &primary{}
	p.addr = serve(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		p.mu.Lock()
		defer p.mu.Unlock()
		q := r.Question[0]
		p.asks = append(p.asks, dns.TypeToString[q.Qtype])
		var out []dns.RR
		switch q.Qtype {
		case dns.TypeSOA:
			m := new(dns.Msg)
			m.SetReply(r)
			m.Answer = rrs(t, soa(itoa(p.soa)))
			w.WriteMsg(m)
			return
		case dns.TypeAXFR:
			out = p.axfr
		case dns.TypeIXFR:
			out = p.ixfr
		}
		ch := make(chan *dns.Envelope)
		tr := new(dns.Transfer)
		done := make(chan struct{})
		go func() { tr.Out(w, r, ch); close(done) }()
		ch <- &dns.Envelope{RR: out}
		close(ch)
		<-done
		w.Hijack()
		w.Close()
	}))
	return p
}

func itoa(n uint32) string { return strconv.FormatUint(uint64(n), 10) }

func (p *primary) set(serial uint32, axfr, ixfr []dns.RR) {
	p.mu.Lock()
	p.soa, p.axfr, p.ixfr, p.asks = serial, axfr, ixfr, nil
	p.mu.Unlock()
}

// askLog notes what a test's primary was asked; its mu is the primary's
// lock.
type askLog struct {
	mu   sync.Mutex
	asks []string
}

func (l *askLog) asked() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Join(l.asks, " ")
}

type events struct {
	mu  sync.Mutex
	log []string
}

func (e *events) add(_, kind string, z *zonestore.Zone, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	switch {
	case err != nil:
		e.log = append(e.log, kind+" failed")
	case z != nil:
		e.log = append(e.log, kind+" "+itoa(z.Serial()))
	default:
		e.log = append(e.log, kind)
	}
}

func (e *events) String() string { e.mu.Lock(); defer e.mu.Unlock(); return strings.Join(e.log, ", ") }

func zoneV(t *testing.T, serial string, extra ...string) []dns.RR {
	base := []string{soa(serial), "example.test. 300 NS ns1.example.test.", "ns1.example.test. 300 A 192.0.2.53"}
	return rrs(t, append(append(base, extra...), soa(serial))...)
}

func answer(s *zonestore.Store, name string) string {
	z := s.Find(name)
	if z == nil {
		return "no zone"
	}
	res := z.Lookup(name, dns.TypeA, false)
	if len(res.Answer) == 0 {
		return dns.RcodeToString[res.Rcode]
	}
	return res.Answer[0].(*dns.A).A.String()
}

// TestTransfersNeverPublishHalf: a truncated AXFR, an IXFR out of order,
// and an IXFR that does not apply never replace the version being served;
// the IXFR failures fall back to AXFR; a good IXFR is applied as one
// version.
func TestTransfersNeverPublishHalf(t *testing.T) {
	p := startPrimary(t)
	store := zonestore.NewStore()
	ev := &events{}
	sec := New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: store, Events: ev.add})

	// A truncated first AXFR: nothing is served.
	v1 := zoneV(t, "1", "www.example.test. 300 A 192.0.2.1")
	p.set(1, v1[:len(v1)-1], nil)
	if err := sec.Refresh(); err == nil || store.Get("example.test.") != nil {
		t.Fatalf("a truncated AXFR: err %v, zone %v", err, store.Get("example.test."))
	}
	p.set(1, v1, nil)
	if err := sec.Refresh(); err != nil || answer(store, "www.example.test.") != "192.0.2.1" {
		t.Fatalf("AXFR: %v, www %s", err, answer(store, "www.example.test."))
	}

	// A good IXFR: 1 -> 2 -> 3 in two differences, published as one version.
	v3 := zoneV(t, "3", "www.example.test. 300 A 192.0.2.3", "new.example.test. 300 A 192.0.2.4")
	good := rrs(t, soa("3"),
		soa("1"), "www.example.test. 300 A 192.0.2.1", soa("2"), "www.example.test. 300 A 192.0.2.2",
		soa("2"), "www.example.test. 300 A 192.0.2.2", soa("3"), "www.example.test. 300 A 192.0.2.3", "new.example.test. 300 A 192.0.2.4",
		soa("3"))
	p.set(3, v3, good)
	gen := store.Get("example.test.").Generation()
	if err := sec.Refresh(); err != nil || answer(store, "www.example.test.") != "192.0.2.3" || answer(store, "new.example.test.") != "192.0.2.4" {
		t.Fatalf("IXFR: %v, www %s", err, answer(store, "www.example.test."))
	}
	if p.asked() != "SOA IXFR" || store.Get("example.test.").Generation() != gen+1 {
		t.Fatalf("asked %q, generations %d -> %d", p.asked(), gen, store.Get("example.test.").Generation())
	}

	for _, bad := range []struct {
		name string
		ixfr []string
	}{
		{"does not apply", []string{soa("4"), soa("3"), "gone.example.test. 300 A 192.0.2.9", soa("4"), soa("4")}},
		{"out of order", []string{soa("4"), soa("3"), soa("3"), soa("2"), soa("4"), soa("4")}},
		{"truncated", []string{soa("4"), soa("3"), "www.example.test. 300 A 192.0.2.3", soa("4"), "www.example.test. 300 A 192.0.2.5"}},
	} {
		cur := store.Get("example.test.")
		v4 := zoneV(t, "4", "www.example.test. 300 A 192.0.2.5")
		p.set(4, v4[:len(v4)-1], rrs(t, bad.ixfr...)) // and the AXFR fallback truncated too
		if err := sec.Refresh(); err == nil || store.Get("example.test.") != cur {
			t.Fatalf("%s: err %v; the version changed", bad.name, err)
		}
		if p.asked() != "SOA IXFR AXFR" {
			t.Fatalf("%s: asked %q, want the AXFR fallback", bad.name, p.asked())
		}
		p.set(4, v4, rrs(t, bad.ixfr...)) // now a good AXFR
		if err := sec.Refresh(); err != nil || answer(store, "www.example.test.") != "192.0.2.5" {
			t.Fatalf("%s, then a good AXFR: %v, www %s", bad.name, err, answer(store, "www.example.test."))
		}
		// Back to version 3 for the next case.
		b := store.Get("example.test.")
		z3, _ := zonestore.NewBuilder("example.test.", "")
		for _, rr := range v3[:len(v3)-1] {
			z3.Add(rr, 0)
		}
		z, _ := z3.Build()
		store.Publish(b, z, true)
	}
	if want := "axfr failed, axfr 1, ixfr 3" + strings.Repeat(", ixfr failed, axfr failed, ixfr failed, axfr 4", 3); ev.String() != want {
		t.Fatalf("events:\n %s\nwant\n %s", ev, want)
	}
}

// TestAHeldVersionExpiresOnItsOwnTimer: a version already in the store
// when the secondary starts (carried over a Corefile reload) is not
// expired by a first refresh that fails; it expires once its SOA expire
// has passed without a good one.
func TestAHeldVersionExpiresOnItsOwnTimer(t *testing.T) {
	store := zonestore.NewStore()
	b, _ := zonestore.NewBuilder("example.test.", "")
	for _, rr := range rrs(t, "example.test. 300 SOA ns1.example.test. h.example.test. 1 3600 1 1 300", "example.test. 300 NS ns1.example.test.", "ns1.example.test. 300 A 192.0.2.53") {
		b.Add(rr, 0)
	}
	z, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	store.Publish(nil, z, true)
	sec := New(Config{Origin: "example.test.", Primaries: []string{"127.0.0.1:9"}, Store: store, Timeout: 100 * time.Millisecond})
	if err := sec.Refresh(); err == nil {
		t.Fatal("a refresh from a closed port succeeded")
	}
	sec.checkExpiry(store.Get("example.test."))
	if store.Get("example.test.").Expired() {
		t.Fatal("expired at once, before its SOA expire (1 s) passed")
	}
	time.Sleep(1100 * time.Millisecond)
	sec.checkExpiry(store.Get("example.test."))
	if !store.Get("example.test.").Expired() {
		t.Fatal("not expired after its SOA expire")
	}
}
