package codel

import (
	"fmt"
	"os"
	"runtime"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
	"github.com/ontimedns/ontime/internal/ahead"
	"github.com/ontimedns/ontime/internal/raceflag"
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
// are zonestore's: the set where its answer would be kept, then, none
// being kept, the lookup's path, TestWarmFollowsTheLookup); one with two
// has none.
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
	p := &packet{packetState: packetState{buf: &b, n: len(b), ctx: packetContext{route: r.route}}}
	for range 3 { // replay's two (the second, finding nothing kept, takes the store's first, to the zone of a store of one), then its node
		p.warm()
	}
	if p.qend != len(b) || p.note.Step != 5 || p.note.P == nil || p.note.Q == nil {
		t.Fatalf("after three warmings: question ends at %d, note %+v; want the name's node found", p.qend, p.note)
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

// TestWarmFetchesAKeptAnswer: where the query's answer is kept packed
// (zonestore's replay, behind fastpack), warming fetches it and stops
// there, without walking the lookup's path (nor finding the zone, one of
// few, as it would among many: TestWarmFollowsTheLookup). One P, so that the worker that kept the
// answer and this test take the same cache from the pool.
func TestWarmFetchesAKeptAnswer(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("under the race detector sync.Pool drops a quarter of what it is given: the cache may not be met again")
	}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	r := startServer(t, " codel\n fastpack\n", "", workload.Zone(100), workload.Origin)
	m := new(dns.Msg)
	m.SetQuestion("host1."+workload.Origin, dns.TypeA)
	for range 2 { // kept at its second miss (replay/admit.go)
		if in, err := dns.Exchange(m, r.local.String()); err != nil || len(in.Answer) != 1 {
			t.Fatalf("answer %v, %v", in, err)
		}
	}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	p := &packet{packetState: packetState{buf: &b, n: len(b), ctx: packetContext{route: r.route}}}
	more := p.warm()
	more = p.warm() && more
	if !more || p.note.Step == ahead.Done || p.note.P != nil {
		t.Fatalf("after two warmings: note %+v (more: %v); want the kept answer's steps, not the lookup's", p.note, more)
	}
	if p.warm() || p.warm() || p.note.Step != ahead.Done || p.note.P != nil {
		t.Fatalf("after three warmings: note %+v; want done, the lookup's path not walked (nor the zone, one of a store of few)", p.note)
	}
}

// TestAsksDO: a query's DO bit is read from its OPT record, the first
// additional record after its one question, whatever its EDNS options;
// a query without one, with DO clear, with records before it, or cut
// short, does not ask.
func TestAsksDO(t *testing.T) {
	query := func(edns, do bool, edit func(*dns.Msg)) []byte {
		m := new(dns.Msg)
		m.SetQuestion("www.example.org.", dns.TypeA)
		if edns {
			m.SetEdns0(1232, do)
			o := m.IsEdns0()
			o.Option = append(o.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"})
		}
		if edit != nil {
			edit(m)
		}
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	rr, _ := dns.NewRR("www.example.org. 300 IN A 192.0.2.1")
	for _, c := range []struct {
		what string
		m    []byte
		want bool
	}{
		{"DO", query(true, true, nil), true},
		{"EDNS without DO", query(true, false, nil), false},
		{"no EDNS", query(false, false, nil), false},
		{"an answer record before the OPT", query(true, true, func(m *dns.Msg) { m.Answer = []dns.RR{rr} }), false},
		{"an authority record before the OPT", query(true, true, func(m *dns.Msg) { m.Ns = []dns.RR{rr} }), false},
		{"another record first in additional", query(true, true, func(m *dns.Msg) { m.Extra = append([]dns.RR{rr}, m.Extra...) }), false},
	} {
		qend := questionEnd(c.m)
		if qend <= 0 {
			t.Fatalf("%s: no question", c.what)
		}
		if got := asksDO(c.m, qend); got != c.want {
			t.Errorf("%s: asks DO %v, want %v", c.what, got, c.want)
		}
		for n := qend; n < len(c.m); n++ { // cut short: never more than whole
			if asksDO(c.m[:n], qend) && !c.want {
				t.Errorf("%s cut to %d octets: asks DO", c.what, n)
			}
		}
	}
}
