package zonestore

import (
	"strings"
	"testing"
	"unsafe"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
	"github.com/ontimedns/ontime/internal/ahead"
)

// question is the wire form of the question of a query for name and qtype.
func question(t testing.TB, name string, qtype uint16) []byte {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b[12:]
}

// TestLowerWireIsTheKey: the key Warm makes of a question's wire form is
// the key the lookup makes of its name, whatever the name's case and
// escapes; what is not one whole name and four octets is refused.
func TestLowerWireIsTheKey(t *testing.T) {
	names := []string{".", "WWW.Example.ORG.", `a\.b.example.org.`, `\000\255Z.example.`, strings.Repeat("a.", 127)}
	for _, q := range workload.Queries(50000, 2000) {
		names = append(names, q.Name, strings.ToUpper(q.Name))
	}
	var room [maxName + 8]byte
	for _, name := range names {
		want, err := key(name)
		if err != nil {
			t.Fatal(err)
		}
		got, ok := lowerWire(&room, question(t, name, dns.TypeA))
		if !ok || got != want {
			t.Fatalf("%q: key %q %v, want %q", name, got, ok, want)
		}
	}
	q := question(t, "www.example.org.", dns.TypeA)
	for _, bad := range [][]byte{nil, {0}, q[:len(q)-1], append(q[:len(q):len(q)], 0), {64, 'a', 0, 0, 1, 0, 1}, {0xC0, 12, 0, 1, 0, 1}} {
		if k, ok := lowerWire(&room, bad); ok {
			t.Fatalf("% x: key %q", bad, k)
		}
	}
}

// TestWarmFollowsTheLookup: each call of Warm for a question finds what
// the lookup will read next: the zone and the name's hash in its index,
// then the name's node, then its RRset of the question's type (or its
// CNAME); for a zone without an index, through its array of names. A
// name no zone holds and a name the zone does not hold stop early, and a
// malformed question at once.
func TestWarmFollowsTheLookup(t *testing.T) {
	s := NewStore()
	big, err := Parse(strings.NewReader(workload.Zone(50000)), workload.Origin, "")
	if err != nil {
		t.Fatal(err)
	}
	small, err := parse(t, head+"www A 192.0.2.1\n")
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.Publish(nil, big, false))
	must(t, s.Publish(nil, small, false))

	warmed := 0
	for _, q := range workload.Queries(50000, 3000) {
		qtype := dns.StringToType[q.Type]
		var note ahead.Note
		s.Warm(&note, question(t, q.Name, qtype))
		k, _ := key(q.Name)
		if note.Step != 1 || note.P != unsafe.Pointer(big) || note.W != big.idx.hashOf(k) {
			t.Fatalf("%s: step 1 %+v, want the zone and the name's hash", q.Name, note)
		}
		s.Warm(&note, question(t, q.Name, qtype))
		n := big.nodes[k]
		if n == nil {
			if note.Step != ahead.Done {
				t.Fatalf("%s, which the zone does not hold: step 2 %+v, want the end", q.Name, note)
			}
			continue
		}
		if note.Step != 2 || note.Q != unsafe.Pointer(n) {
			t.Fatalf("%s: step 2 %+v, want its node", q.Name, note)
		}
		s.Warm(&note, question(t, q.Name, qtype))
		s.Warm(&note, question(t, q.Name, qtype))
		set := n.get(qtype)
		if set == nil {
			set = n.get(dns.TypeCNAME)
		}
		switch {
		case set == nil && note.Step != ahead.Done:
			t.Fatalf("%s %s, which it does not hold: step 4 %+v, want the end", q.Name, q.Type, note)
		case set != nil && (note.Step != 4 || note.Q != unsafe.Pointer(set)):
			t.Fatalf("%s %s: step 4 %+v, want its RRset", q.Name, q.Type, note)
		case set != nil:
			warmed++
		}
		for range 3 { // to the end, and past it
			s.Warm(&note, question(t, q.Name, qtype))
		}
		if note.Step != ahead.Done {
			t.Fatalf("%s: ends at step %d, want Done", q.Name, note.Step)
		}
	}
	if warmed < 1000 {
		t.Fatalf("only %d of 3000 questions warmed to their records", warmed)
	}
	// A small zone's name warms as a large zone's does, through its
	// array of names (few.go) where the large zone has its index.
	www := question(t, "www.example.org.", dns.TypeA)
	k, _ := key("www.example.org.")
	n := small.node(k)
	var note ahead.Note
	s.Warm(&note, www)
	if note.Step != 1 || note.P != unsafe.Pointer(small) || note.W != fewHash(k) {
		t.Fatalf("www.example.org.: step 1 %+v, want the small zone and the name's hash", note)
	}
	s.Warm(&note, www)
	if note.Step != 2 || note.Q != unsafe.Pointer(n) {
		t.Fatalf("www.example.org.: step 2 %+v, want its node", note)
	}
	s.Warm(&note, www)
	s.Warm(&note, www)
	if set := n.get(dns.TypeA); note.Step != 4 || note.Q != unsafe.Pointer(set) {
		t.Fatalf("www.example.org.: step 4 %+v, want its RRset", note)
	}
	for _, q := range [][]byte{question(t, "www.example.com.", dns.TypeA), {1, 2, 3}} {
		var note ahead.Note
		s.Warm(&note, q)
		if note.Step != ahead.Done || note.P != nil {
			t.Fatalf("% x: %+v, want nothing warmed", q, note)
		}
	}
}

// FuzzWarm: any octets as a question warm without a panic, in as many
// calls as are made.
func FuzzWarm(f *testing.F) {
	s := NewStore()
	for _, z := range conformanceZones(f) {
		must(f, s.Publish(nil, z, false))
	}
	f.Add(question(f, "www.example.org.", dns.TypeA))
	f.Add(question(f, "a.b.dname.signed.test.", dns.TypeCNAME))
	f.Add([]byte{0xC0, 12, 0, 1, 0, 1})
	f.Fuzz(func(t *testing.T, q []byte) {
		var note ahead.Note
		for range 8 {
			s.Warm(&note, q)
		}
	})
}

// TestWarmWithAnotherQuestion: a caller that breaks the contract, giving a
// later call other octets than the first, gets nothing warmed from then on
// and no panic.
func TestWarmWithAnotherQuestion(t *testing.T) {
	s := NewStore()
	z, err := Parse(strings.NewReader(workload.Zone(100)), workload.Origin, "")
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.Publish(nil, z, false))
	q := question(t, "host1."+workload.Origin, dns.TypeA)
	for _, later := range [][]byte{nil, {1}, q[:3]} {
		var note ahead.Note
		s.Warm(&note, q)
		s.Warm(&note, q)
		s.Warm(&note, q)
		s.Warm(&note, later)
		if note.Step != ahead.Done {
			t.Fatalf("% x after the question: step %d, want Done", later, note.Step)
		}
		s.Warm(&note, later)
	}
}
