package test

import (
	"fmt"
	"os/exec"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// TestNotifySerialHintFromKnot: a NOTIFY's SOA serial is a hint (RFC 1996
// section 3.7). Knot sends its NOTIFY with the zone's SOA in the answer
// section; one for the version ontime serves (`knotc zone-notify`, as a
// primary started again sends for every zone) is acknowledged and counted
// "current", and asks Knot nothing. A NOTIFY naming a newer serial, one
// with no SOA, and one whose SOA has another owner each refresh the zone
// (an SOA query that finds it current), counted "accepted"; a new version
// on Knot still arrives by its NOTIFY.
func TestNotifySerialHintFromKnot(t *testing.T) {
	port := freeport.Get(t)
	knot := startKnotPrimary(t, "example.test", secondaryZone(7, "www A 192.0.2.1"), port, "")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	corefile := fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    prometheus %s\n    zonestore {\n        secondary example.test %s\n    }\n}\n", port, prom, knot.addr)
	s := startCorefile(t, corefile, port, "example.test")
	eventually(t, "the first transfer", func() bool { return answerA(t, s.addr, "www.example.test.") == "192.0.2.1" })

	const (
		current  = `coredns_zonestore_notifies_total{result="current",zone="example.test."}`
		accepted = `coredns_zonestore_notifies_total{result="accepted",zone="example.test."}`
		checked  = `coredns_zonestore_transfers_total{result="current",type="current",zone="example.test."}`
	)
	base := metric(t, prom, accepted) // Knot's NOTIFY at its start, if it came after the first transfer
	refreshes := metric(t, prom, checked)

	if out, err := exec.Command("knotc", "-c", knot.conf, "zone-notify", "example.test").CombinedOutput(); err != nil {
		t.Fatalf("knotc zone-notify: %v\n%s", err, out)
	}
	eventually(t, "Knot's NOTIFY of serial 7 counted current", func() bool { return metric(t, prom, current) == 1 })
	// A refresh would have begun at once, on an idle worker: give it time
	// to show.
	time.Sleep(500 * time.Millisecond)
	if n := metric(t, prom, checked); n != refreshes {
		t.Fatalf("SOA queries found current: %v, want %v: a NOTIFY of the serial served refreshed the zone", n, refreshes)
	}
	if n := metric(t, prom, accepted); n != base {
		t.Fatalf("NOTIFY accepted %v times, want %v", n, base)
	}

	for i, hint := range []dns.RR{
		soaRR(t, "example.test.", 8), // newer than the zone served
		nil,                          // no SOA
		soaRR(t, "other.test.", 7),   // not the zone's
	} {
		m := new(dns.Msg)
		m.SetNotify("example.test.")
		if hint != nil {
			m.Answer = []dns.RR{hint}
		}
		r, err := exchange(t, s.addr, m, false)
		if err != nil || r.Rcode != dns.RcodeSuccess {
			t.Fatalf("NOTIFY %d: %v %v", i, err, r)
		}
		want := refreshes + float64(i) + 1
		eventually(t, fmt.Sprintf("NOTIFY %d to refresh the zone", i), func() bool { return metric(t, prom, checked) == want })
		if n := metric(t, prom, accepted); n != base+float64(i)+1 {
			t.Fatalf("NOTIFY %d: accepted counted %v, want %v", i, n, base+float64(i)+1)
		}
	}

	knot.update(t, secondaryZone(9, "www A 192.0.2.9"))
	eventually(t, "serial 9 by Knot's NOTIFY", func() bool { return answerA(t, s.addr, "www.example.test.") == "192.0.2.9" })
	if n := metric(t, prom, current); n != 1 {
		t.Errorf("NOTIFY counted current %v times, want 1", n)
	}
}

// soaRR is an SOA record of origin with serial, as a NOTIFY carries it.
func soaRR(t testing.TB, origin string, serial uint32) dns.RR {
	rr, err := dns.NewRR(fmt.Sprintf("%s 300 SOA ns1.%s hostmaster.%s %d 3600 1 4 300", origin, origin, origin, serial))
	if err != nil {
		t.Fatal(err)
	}
	return rr
}
