package codel

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
)

// TestQuestionEnd: where a query's question ends, as miekg/dns packs it,
// with EDNS and without; -1 for what has not one whole question.
func TestQuestionEnd(t *testing.T) {
	names := []string{".", strings.Repeat("a.", 127)}
	for _, q := range workload.Queries(50000, 500) {
		names = append(names, q.Name)
	}
	for _, name := range names {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeAAAA)
		plain, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		m.SetEdns0(1232, true)
		edns, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		if got, got2 := questionEnd(plain), questionEnd(edns); got != len(plain) || got2 != len(plain) {
			t.Fatalf("%q: question ends at %d and %d (EDNS), want %d", name, got, got2, len(plain))
		}
	}
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	q, _ := m.Pack()
	set := func(at int, b ...byte) []byte { c := append([]byte(nil), q...); copy(c[at:], b); return c }
	// A name of 256 octets: 126 labels of one, one of two, and the root.
	long := append(set(4, 0, 1)[:12], append([]byte(strings.Repeat("\x01a", 126)), 2, 'a', 'a', 0, 0, 1, 0, 1)...)
	for name, bad := range map[string][]byte{
		"header only":     q[:12],
		"no question":     set(4, 0, 0),
		"two questions":   set(4, 0, 2),
		"cut in the name": q[:15],
		"cut in the type": q[:len(q)-3],
		"a pointer":       set(12, 0xC0, 12),
		"a label of 64":   set(12, 64),
		"a name of 256":   long,
	} {
		if got := questionEnd(bad); got != -1 {
			t.Errorf("%s: question ends at %d, want -1", name, got)
		}
	}
}

// TestZonestoreWarmsTheServersQueries: a server whose blocks have one
// zonestore has it warm the packets its workers will serve (the steps
// are zonestore's, TestWarmFollowsTheLookup); one with two has none.
func TestZonestoreWarmsTheServersQueries(t *testing.T) {
	r := startServer(t, " codel\n", "", workload.Zone(100), workload.Origin)
	if r.route == nil || fmt.Sprintf("%T", r.route.warmer) != "*zonestore.Handler" {
		t.Fatalf("the server's Warmer is %T, want zonestore's handler", r.route.warmer)
	}
	m := new(dns.Msg)
	m.SetQuestion("host1."+workload.Origin, dns.TypeA)
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	p := &packet{buf: &b, n: len(b), ctx: packetContext{route: r.route}}
	p.warm()
	p.warm()
	if p.qend != len(b) || p.note.Step != 2 || p.note.P == nil || p.note.Q == nil {
		t.Fatalf("after two warmings: question ends at %d, note %+v; want the name's node found", p.qend, p.note)
	}

	other := t.TempDir() + "/db.other"
	if err := os.WriteFile(other, []byte(strings.ReplaceAll(workload.Zone(10), workload.Origin, "other.test.")), 0o644); err != nil {
		t.Fatal(err)
	}
	r = startServer(t, " codel\n", "other.test:PORT {\n bind 127.0.0.1\n zonestore "+other+" other.test\n}\n", workload.Zone(100), workload.Origin)
	if r.route == nil || r.route.warmer != nil {
		t.Fatalf("a server of two zonestore blocks has Warmer %T, want none", r.route.warmer)
	}
}
