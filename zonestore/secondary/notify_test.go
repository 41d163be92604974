package secondary

import (
	"net"
	"testing"
	"time"

	"github.com/ontimedns/ontime/zonestore"
)

// TestNotifySerialIsAHint: a NOTIFY whose serial the zone serves, or one
// older, refreshes nothing and asks the primary nothing; a newer one, by
// serial arithmetic across the wrap too, refreshes it; a zone not yet
// transferred, or expired, is refreshed whatever the serial. Either way
// the primary, held unreachable, is let go: it was heard from.
func TestNotifySerialIsAHint(t *testing.T) {
	ip := net.ParseIP("127.0.0.1")
	p := startPrimary(t)
	p.set(4294967295, zoneV(t, "4294967295"), nil)
	store := zonestore.NewStore()
	ev := &events{}
	sec := New(Config{Origin: "example.test.", Primaries: []string{p.addr}, Store: store, Events: ev.add})
	if !sec.NotifySerialFrom(ip, 1) {
		t.Fatal("a zone not yet transferred was not refreshed")
	}
	q := NewScheduler(1)
	t.Cleanup(q.Stop)
	q.Add(sec)
	waitFor(t, "the first transfer", sec.Loaded)
	waitFor(t, "the first refresh to end", func() bool { return p.asked() == "SOA AXFR" || p.asked() == "AXFR" })

	p.set(4294967295, zoneV(t, "4294967295"), nil)
	q.unreach.missed(p.addr)
	q.unreach.missed(p.addr) // held, as after two queries unanswered
	if _, held := q.unreach.held(p.addr); !held {
		t.Fatal("the primary is not held after two misses")
	}
	for _, serial := range []uint32{4294967295, 4294967000, 2147483648} {
		if sec.NotifySerialFrom(ip, serial) {
			t.Errorf("NOTIFY of serial %d refreshed a zone at 4294967295", serial)
		}
	}
	if _, held := q.unreach.held(p.addr); held {
		t.Error("the primary still held after a NOTIFY from its address")
	}
	// A refresh would have begun at once, the worker idle.
	time.Sleep(300 * time.Millisecond)
	if got := p.asked(); got != "" {
		t.Fatalf("the primary was asked %q after NOTIFY of serials not newer", got)
	}
	if !sec.NotifySerialFrom(ip, 3) { // 4294967295 + 4
		t.Fatal("NOTIFY of serial 3, past the wrap, did not refresh a zone at 4294967295")
	}
	waitFor(t, "the SOA query to find the zone current", func() bool { return ev.String() == "axfr 4294967295, current" })
	if got := p.asked(); got != "SOA" {
		t.Fatalf("the primary was asked %q, want one SOA query", got)
	}

	// An expired version is refreshed, its serial the hint's or not.
	cur := store.Get("example.test.")
	if err := store.Publish(cur, cur.WithExpired(true), true); err != nil {
		t.Fatal(err)
	}
	if !sec.NotifySerialFrom(ip, 4294967295) {
		t.Fatal("an expired zone was not refreshed")
	}
}
