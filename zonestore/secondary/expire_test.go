package secondary

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// expirePrimary answers the SOA query and transfers of example.test. in
// one message each, with an EXPIRE option of expire seconds (none where
// expire is negative), as a secondary that is another's primary does. It
// notes whether each query asked for it (an empty EXPIRE option).
type expirePrimary struct {
	askLog
	addr   string
	serial uint32
	expire int64
	xfr    []dns.RR // the answer to a transfer (AXFR or IXFR) of serial
	noEDNS bool     // FORMERR to a query with an OPT record, as a server of before EDNS
}

func startExpirePrimary(t *testing.T) *expirePrimary {
	p := &expirePrimary{}
	p.addr = serve(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		p.mu.Lock()
		defer p.mu.Unlock()
		q := r.Question[0]
		ask := dns.TypeToString[q.Qtype]
		if o := r.IsEdns0(); o != nil && len(o.Option) == 1 {
			if e, ok := o.Option[0].(*dns.EDNS0_EXPIRE); ok && e.Empty {
				ask += "+expire"
			}
		}
		p.asks = append(p.asks, ask)
		m := new(dns.Msg)
		m.SetReply(r)
		if p.noEDNS && r.IsEdns0() != nil {
			m.Rcode = dns.RcodeFormatError
			w.WriteMsg(m)
			return
		}
		if q.Qtype == dns.TypeSOA {
			m.Answer = rrs(t, soa(itoa(p.serial)))
		} else {
			m.Answer = p.xfr
		}
		if p.expire >= 0 {
			m.SetEdns0(1232, false)
			m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_EXPIRE{Code: dns.EDNS0EXPIRE, Expire: uint32(p.expire)}}
		}
		w.WriteMsg(m)
	}))
	return p
}

func (p *expirePrimary) set(serial uint32, expire int64, xfr []dns.RR) {
	p.mu.Lock()
	p.serial, p.expire, p.xfr, p.asks = serial, expire, xfr, nil
	p.mu.Unlock()
}

// left is what an answer from the zone held says of its expire, and what
// the secondary's own timer says, in whole seconds.
func left(t *testing.T, sec *Zone, store *zonestore.Store) (answered, timer int64) {
	t.Helper()
	z := store.Get("example.test.")
	if z == nil {
		t.Fatal("no version held")
	}
	return int64(z.ExpireIn(time.Now())), int64((sec.expiresIn(z) + time.Second/2) / time.Second)
}

// near fails unless got is within a second below want: the seconds pass
// as the test runs.
func near(t *testing.T, what string, got, want int64) {
	t.Helper()
	if got > want || got < want-2 {
		t.Fatalf("%s: %d s, want %d", what, got, want)
	}
}

// TestExpireOption: a primary's EXPIRE (RFC 7314) sets the expire of a
// version it transferred as given, lengthens but never shortens it when
// the primary's SOA says the version held is current, never takes it past
// the SOA's expire, and refuses a transfer from a primary whose copy has
// expired; every query asks for it; a primary that gives none leaves the
// SOA's expire. An answer from the zone says what is left of it
// (zonestore.Zone.ExpireIn), and a saved copy keeps it across a restart.
func TestExpireOption(t *testing.T) {
	p := startExpirePrimary(t)
	store := zonestore.NewStore()
	file := filepath.Join(t.TempDir(), "example.test.zone")
	sec := New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: store, File: file})

	// The zone's SOA expire is 600 s (soa).
	p.set(1, 100, zoneV(t, "1"))
	if err := sec.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := p.asked(); got != "AXFR+expire" {
		t.Fatalf("asked %q, want an AXFR with an EXPIRE option", got)
	}
	answered, timer := left(t, sec, store)
	near(t, "after an AXFR with EXPIRE 100, the answer's", answered, 100)
	near(t, "after an AXFR with EXPIRE 100, the timer's", timer, 100)

	// A restart from the saved copy keeps what the EXPIRE took off.
	fi, err := os.Stat(file)
	if err != nil {
		t.Fatal(err)
	}
	if age := time.Since(fi.ModTime()); age < 498*time.Second || age > 502*time.Second {
		t.Fatalf("the saved copy's time is %v ago, want 500 s (600 less the 100 left)", age.Round(time.Second))
	}
	restored := zonestore.NewStore()
	again := New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: restored, File: file})
	again.restore()
	answered, _ = left(t, again, restored)
	near(t, "restored from the copy", answered, 100)

	// The SOA says the version held is current: a shorter EXPIRE leaves
	// the timer as it was, a longer one lengthens it, never past the SOA's.
	for _, c := range []struct {
		expire int64
		want   int64
	}{{50, 100}, {300, 300}, {5000, 600}, {-1, 600}} {
		p.set(1, c.expire, nil)
		if err := sec.Refresh(); err != nil {
			t.Fatal(err)
		}
		if got := p.asked(); got != "SOA+expire" {
			t.Fatalf("asked %q, want an SOA query with an EXPIRE option", got)
		}
		answered, timer = left(t, sec, store)
		near(t, "current, EXPIRE "+itoa(uint32(c.expire))+", the answer's", answered, c.want)
		near(t, "current, the timer's", timer, c.want)
	}

	// A transfer's EXPIRE stands as given, shorter or not.
	ixfr := rrs(t, soa("2"), soa("1"), soa("2"), "new.example.test. 300 A 192.0.2.2", soa("2"))
	p.set(2, 40, ixfr)
	if err := sec.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := p.asked(); got != "SOA+expire IXFR+expire" {
		t.Fatalf("asked %q", got)
	}
	answered, timer = left(t, sec, store)
	near(t, "after an IXFR with EXPIRE 40, the answer's", answered, 40)
	near(t, "after an IXFR with EXPIRE 40, the timer's", timer, 40)

	// A primary whose copy has expired transfers nothing.
	p.set(3, 1, zoneV(t, "3"))
	err = sec.Refresh()
	if err == nil || !strings.Contains(err.Error(), "expired") {
		t.Fatalf("a transfer with EXPIRE 1: %v, want it refused", err)
	}
	if z := store.Get("example.test."); z.Serial() != 2 {
		t.Fatalf("serial %d served after a refused transfer, want 2", z.Serial())
	}

	// One that gives none: the SOA's expire.
	p.set(3, -1, zoneV(t, "3"))
	if err := sec.Refresh(); err != nil {
		t.Fatal(err)
	}
	answered, timer = left(t, sec, store)
	near(t, "after an IXFR without EXPIRE, the answer's", answered, 600)
	near(t, "the timer's", timer, 600)
}

// TestExpireAnswered: an answer from a zone with no lease (this server
// holds its master copy) says its SOA's expire, as Knot DNS's primary
// does; one past its lease, or marked expired, says 0.
func TestExpireAnswered(t *testing.T) {
	z, err := wholeZone("example.test.", zoneV(t, "1"))
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	if got := z.ExpireIn(now); got != 600 {
		t.Fatalf("a zone without a lease: %d, want its SOA's expire, 600", got)
	}
	var l zonestore.Lease
	z.SetLease(&l)
	if got := z.ExpireIn(now); got != 600 {
		t.Fatalf("a lease never set: %d, want the SOA's expire", got)
	}
	l.Set(now.Add(90*time.Second + time.Millisecond))
	if got := z.ExpireIn(now); got != 90 {
		t.Fatalf("90 s left: %d", got)
	}
	if got := z.ExpireIn(now.Add(91 * time.Second)); got != 0 {
		t.Fatalf("past the lease: %d, want 0", got)
	}
	if got := z.WithExpired(true).ExpireIn(now); got != 0 {
		t.Fatalf("marked expired: %d, want 0", got)
	}
}

// TestLeaseCarriedOver: a zone made again over the version another made
// (a Corefile reload) takes over its lease as it stands, what an EXPIRE
// took off included, and the one it replaced, once retired, moves it no
// more; a version held without a lease (a file's zone, become a
// secondary) is given the zone's at its first refresh, the primary's
// serial the same.
func TestLeaseCarriedOver(t *testing.T) {
	p := startExpirePrimary(t)
	store := zonestore.NewStore()
	first := New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: store})
	p.set(1, 100, zoneV(t, "1"))
	if err := first.Refresh(); err != nil {
		t.Fatal(err)
	}
	second := New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: store})
	first.retire()
	p.set(1, 300, nil)
	if err := first.Refresh(); err != nil {
		t.Fatal(err)
	}
	answered, timer := left(t, second, store)
	near(t, "made again after an AXFR with EXPIRE 100, then the retired zone's refresh (EXPIRE 300)", answered, 100)
	near(t, "made again, the timer's", timer, 100)
	p.set(1, 50, nil)
	gen := store.Get("example.test.").Generation()
	if err := second.Refresh(); err != nil {
		t.Fatal(err)
	}
	if store.Get("example.test.").Generation() != gen {
		t.Fatal("a version holding the zone's lease published again at a refresh that found it current")
	}
	answered, _ = left(t, second, store)
	near(t, "the zone made again, current, EXPIRE 50", answered, 100)

	// A file's zone: no lease, until the secondary's first refresh.
	files := zonestore.NewStore()
	z, err := wholeZone("example.test.", zoneV(t, "1"))
	if err != nil {
		t.Fatal(err)
	}
	files.Publish(nil, z, true)
	sec := New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: files})
	p.set(1, 200, nil)
	if err := sec.Refresh(); err != nil {
		t.Fatal(err)
	}
	if files.Get("example.test.").Lease() == nil {
		t.Fatal("a file's version kept without the secondary's lease")
	}
	answered, _ = left(t, sec, files)
	near(t, "a file's zone become a secondary, current, EXPIRE 200", answered, 600)
}

// TestPrimaryWithoutEDNS: a primary that answers FORMERR to a query with
// an OPT record (a server of before EDNS) is asked again without it, its
// SOA query and its transfers alike, and the zone follows it as before
// the EXPIRE option was asked for, its expire the SOA's. Signed, the
// query asked again carries one TSIG record, made again, and no OPT.
func TestPrimaryWithoutEDNS(t *testing.T) {
	p := startExpirePrimary(t)
	store := zonestore.NewStore()
	sec := New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: store})
	p.set(1, -1, zoneV(t, "1"))
	p.mu.Lock()
	p.noEDNS = true
	p.mu.Unlock()
	if err := sec.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := p.asked(); got != "AXFR+expire AXFR" {
		t.Fatalf("asked %q", got)
	}
	p.set(2, -1, rrs(t, soa("2"), soa("1"), soa("2"), "new.example.test. 300 A 192.0.2.2", soa("2")))
	if err := sec.Refresh(); err != nil {
		t.Fatal(err)
	}
	if got := p.asked(); got != "SOA+expire SOA IXFR+expire IXFR" {
		t.Fatalf("asked %q", got)
	}
	if z := store.Get("example.test."); z.Serial() != 2 || z.ExpireIn(time.Now()) < 599 {
		t.Fatalf("serial %d, expire %d s left; want 2 and the SOA's 600", z.Serial(), z.ExpireIn(time.Now()))
	}

	m := new(dns.Msg)
	m.SetAxfr("example.test.")
	askExpire(m)
	key := &TSIG{Name: "xfr.", Algorithm: dns.HmacSHA256, Secret: "c2VjcmV0"}
	key.stamp(m)
	withoutEDNS(m)
	key.stamp(m)
	if len(m.Extra) != 1 || m.IsTsig() == nil {
		t.Fatalf("a signed query asked again: %v, want its TSIG record alone", m.Extra)
	}
}
