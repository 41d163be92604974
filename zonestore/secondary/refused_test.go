package secondary

import (
	"fmt"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
	"github.com/ontimedns/ontime/zonestore"
)

// rcodePrimary answers every query with rcode.
func rcodePrimary(t *testing.T, rcode int) string {
	return serve(t, dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
		m := new(dns.Msg)
		m.SetRcode(r, rcode)
		w.WriteMsg(m)
	}))
}

// TestRefusedZone: a zone without a version that every primary refuses
// (REFUSED, NOTAUTH) is refused, for readiness; one a primary does not
// answer, answers SERVFAIL (it may be loading), or answers with the zone
// is not; and a zone refused is no longer so once a primary gives it.
func TestRefusedZone(t *testing.T) {
	refusing, notauth, failing := rcodePrimary(t, dns.RcodeRefused), rcodePrimary(t, dns.RcodeNotAuth), rcodePrimary(t, dns.RcodeServerFailure)
	down := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t)) // nothing listens
	p := startPrimary(t)
	p.set(1, zoneV(t, "1"), nil)
	for _, c := range []struct {
		primaries []string
		refused   bool
	}{
		{[]string{refusing}, true},
		{[]string{notauth}, true},
		{[]string{refusing, notauth}, true},
		{[]string{failing}, false},
		{[]string{down}, false},
		{[]string{refusing, down}, false},
		{[]string{refusing, p.addr}, false},
	} {
		store := zonestore.NewStore()
		z := New(Config{Origin: "example.test.", Primaries: c.primaries, Store: store, Timeout: 200 * time.Millisecond})
		z.Refresh()
		if z.Refused() != c.refused {
			t.Errorf("primaries %v: refused %v, want %v", c.primaries, z.Refused(), c.refused)
		}
	}
	// Refused, then given.
	store := zonestore.NewStore()
	z := New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: store})
	z.cfg.Primaries = []string{refusing}
	if z.Refresh(); !z.Refused() {
		t.Fatal("not refused by a primary that refuses")
	}
	z.cfg.Primaries = []string{p.addr}
	if err := z.Refresh(); err != nil || z.Refused() || !z.Loaded() {
		t.Fatalf("given the zone: %v, refused %v, loaded %v", err, z.Refused(), z.Loaded())
	}
}
