package test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/conformance"
)

// TestFloodDenialsAsKnot: names a signed zone lacks, asked with DO all at
// once (a random-subdomain flood), are denied as Knot denies them, one
// query at a time. Sent together, they wait in codel's queue, and its
// workers take them in hands and warm them before serving them: the
// warming's note hands each NSEC3 denial the record that covers the name
// (zonestore's warmcover.go), which a query asked alone, never warmed,
// finds itself. Names one label below the apex (whose next closer name is
// the question), two labels below (whose is not), in the NSEC3 zone and
// in the NSEC one.
func TestFloodDenialsAsKnot(t *testing.T) {
	zones := conformanceZones(t)
	knot := startKnot(t, zones)
	body, origins := zonestoreLines(zones, "")
	full := startCoreDNSWith(t, onePAnswer, "    fastpack\n    codel\n"+body, origins...)

	var qs []conformance.Query
	for i := range 400 {
		for _, name := range []string{
			fmt.Sprintf("flood-%d.nsec3.test.", i),
			fmt.Sprintf("x.flood-%d.nsec3.test.", i),
			fmt.Sprintf("flood-%d.signed.test.", i),
		} {
			qs = append(qs, conformance.Query{Name: name, Qtype: dns.TypeA, Do: true, EDNS: true, Bufsz: 1232, Signed: true})
		}
	}
	msgs := make([]*dns.Msg, len(qs))
	for i, q := range qs {
		msgs[i] = q.Msg()
		msgs[i].Id = uint16(i + 1)
	}
	// In bursts of 100: the answers to 200 overflowed the client's
	// receive buffer before it read them.
	got := map[uint16]*dns.Msg{}
	for i := 0; i < len(msgs); i += 100 {
		for id, m := range exchangeFrom(t, "127.0.0.1", full.addr, msgs[i:min(i+100, len(msgs))]) {
			got[id] = m
		}
	}
	if len(got) < len(qs)*9/10 {
		t.Fatalf("%d answers to a burst of %d", len(got), len(qs))
	}
	failed := 0
	for i, q := range qs {
		ours, ok := got[uint16(i+1)]
		if !ok {
			continue // dropped by codel, late: counted, and no answer to compare
		}
		k, err := exchange(t, knot.addr, q.Msg(), false)
		if err != nil {
			t.Fatalf("knot %s: %v", q, err)
		}
		if d := diff(q, k, ours); len(d) > 0 {
			if failed++; failed <= 5 {
				t.Errorf("%s:\n%s", q, strings.Join(d, "\n"))
			}
		}
		if ours.Rcode != dns.RcodeNameError || len(ours.Ns) < 4 {
			t.Fatalf("%s: %s with %d records of authority, want NXDOMAIN with its proof", q, dns.RcodeToString[ours.Rcode], len(ours.Ns))
		}
	}
	if failed > 0 {
		t.Fatalf("%d of %d answers differ from Knot's", failed, len(got))
	}
}
