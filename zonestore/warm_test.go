package zonestore

import (
	"encoding/binary"
	"fmt"
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
// the lookup will read next: the store's table of origins, the slot of
// the name's zone, the zone, and the name's hash in its index; then the
// name's node, then its RRset of the question's type (or its CNAME); for
// a zone without an index, through its array of names. A name no zone
// holds and a name the zone does not hold stop early, and a malformed
// question at once.
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
	for i := range fewOrigins { // zones beside them, whose origins the table holds too
		must(t, s.Publish(nil, genZone(t, fmt.Sprintf("z%d.example.", i), 3, 1), false))
	}
	// A store of fewOrigins zones or fewer finds the zone in the first
	// step, and goes on from the slot of its index.
	few := NewStore()
	must(t, few.Publish(nil, big, false))
	must(t, few.Publish(nil, small, false))
	for _, q := range workload.Queries(50000, 100) {
		var note ahead.Note
		k, _ := key(q.Name)
		few.Warm(&note, question(t, q.Name, dns.TypeA))
		if note.Step != 4 || note.P != unsafe.Pointer(big) || note.W != big.idx.hashOf(k) {
			t.Fatalf("%s among two zones: step 4 %+v, want the zone and the name's hash", q.Name, note)
		}
	}
	var none ahead.Note
	if few.Warm(&none, question(t, "www.example.com.", dns.TypeA)); none.Step != ahead.Done {
		t.Fatalf("www.example.com. among two zones: %+v, want nothing warmed", none)
	}

	// Among more zones, toTheName takes the four steps to the name's
	// hash in z.
	toTheName := func(note *ahead.Note, name string, q []byte, z *Zone, hash uint64) {
		t.Helper()
		s.Warm(note, q)
		if note.Step != 1 || note.P != unsafe.Pointer(s.index.Load()) {
			t.Fatalf("%s: step 1 %+v, want the table of origins", name, note)
		}
		s.Warm(note, q)
		if sl := s.index.Load().get(z.originKey); note.Step != 2 || note.P != unsafe.Pointer(sl) {
			t.Fatalf("%s: step 2 %+v, want the slot of its zone", name, note)
		}
		s.Warm(note, q)
		if note.Step != 3 || note.P != unsafe.Pointer(z) {
			t.Fatalf("%s: step 3 %+v, want its zone", name, note)
		}
		s.Warm(note, q)
		if note.Step != 4 || note.P != unsafe.Pointer(z) || note.W != hash {
			t.Fatalf("%s: step 4 %+v, want the zone and the name's hash", name, note)
		}
	}

	warmed := 0
	for _, q := range workload.Queries(50000, 3000) {
		qtype := dns.StringToType[q.Type]
		var note ahead.Note
		k, _ := key(q.Name)
		toTheName(&note, q.Name, question(t, q.Name, qtype), big, big.idx.hashOf(k))
		s.Warm(&note, question(t, q.Name, qtype))
		n := big.nodes[k]
		if n == nil {
			if note.Step != ahead.Done {
				t.Fatalf("%s, which the zone does not hold: step 5 %+v, want the end", q.Name, note)
			}
			continue
		}
		if note.Step != 5 || note.Q != unsafe.Pointer(n) {
			t.Fatalf("%s: step 5 %+v, want its node", q.Name, note)
		}
		s.Warm(&note, question(t, q.Name, qtype))
		s.Warm(&note, question(t, q.Name, qtype))
		set := n.get(qtype)
		if set == nil {
			set = n.get(dns.TypeCNAME)
		}
		switch {
		case set == nil && note.Step != ahead.Done:
			t.Fatalf("%s %s, which it does not hold: step 7 %+v, want the end", q.Name, q.Type, note)
		case set != nil && (note.Step != 7 || note.Q != unsafe.Pointer(set)):
			t.Fatalf("%s %s: step 7 %+v, want its RRset", q.Name, q.Type, note)
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
	toTheName(&note, "www.example.org.", www, small, fewHash(k))
	s.Warm(&note, www)
	if note.Step != 5 || note.Q != unsafe.Pointer(n) {
		t.Fatalf("www.example.org.: step 5 %+v, want its node", note)
	}
	s.Warm(&note, www)
	s.Warm(&note, www)
	if set := n.get(dns.TypeA); note.Step != 7 || note.Q != unsafe.Pointer(set) {
		t.Fatalf("www.example.org.: step 7 %+v, want its RRset", note)
	}
	// WarmZone (a query whose answer is kept) stops at the zone, in
	// three steps among many zones; among few it fetches nothing.
	note = ahead.Note{}
	steps := 0
	for ; note.Step != ahead.Done && steps < 5; steps++ {
		s.WarmZone(&note, www)
	}
	if steps != 3 || note.P != unsafe.Pointer(small) || note.Q != nil {
		t.Fatalf("www.example.org., its answer kept: %+v after %d steps, want the zone after 3", note, steps)
	}
	note = ahead.Note{}
	if few.WarmZone(&note, www); note.Step != ahead.Done || note.P != nil {
		t.Fatalf("www.example.org., its answer kept, among two zones: %+v, want nothing fetched", note)
	}
	for _, q := range [][]byte{question(t, "www.example.com.", dns.TypeA), {1, 2, 3}} {
		var note ahead.Note
		s.Warm(&note, q)
		s.Warm(&note, q)
		if note.Step != ahead.Done {
			t.Fatalf("% x: %+v, want nothing warmed past the origins", q, note)
		}
	}
}

// FuzzWarm: any octets as a question warm without a panic, in as many
// calls as are made, with DO and without (the NSEC3 cover's steps).
func FuzzWarm(f *testing.F) {
	s, _ := conformanceStore(f)
	f.Add(question(f, "www.example.org.", dns.TypeA))
	f.Add(question(f, "a.b.dname.signed.test.", dns.TypeCNAME))
	f.Add([]byte{0xC0, 12, 0, 1, 0, 1})
	f.Add(question(f, "absent.nsec3.test.", dns.TypeA))
	f.Add(question(f, "absent1.nsec3.test.", dns.TypeA))   // of even length: with DO, its cover read from the note
	f.Add(question(f, "x.absent1.nsec3.test.", dns.TypeA)) // the same, the note's name not the one denied
	f.Fuzz(func(t *testing.T, q []byte) {
		note := ahead.Note{DO: len(q)%2 == 0}
		for range 10 {
			s.Warm(&note, q)
		}
		// What the answer reads from the note (warmcover.go) is what it
		// would find without it.
		name, off, err := dns.UnpackDomainName(q, 0)
		if err != nil || off+2 > len(q) {
			return
		}
		n, err := NewName(name)
		if err != nil {
			return
		}
		if z := s.FindName(n); z != nil {
			qtype := binary.BigEndian.Uint16(q[off:])
			var warmed, cold Response
			z.AnswerWarmed(&warmed, n, qtype, note.DO, &note)
			z.AnswerWarmed(&cold, n, qtype, note.DO, nil)
			if got, want := responseText(&warmed), responseText(&cold); got != want {
				t.Fatalf("%s %d warmed (%+v):\n%s\nwant:\n%s", name, qtype, note, got, want)
			}
		}
	})
}

// TestWarmWithAnotherQuestion: a caller that breaks the contract, giving a
// later call other octets than the first, gets nothing warmed from then on
// and no panic.
func TestWarmWithAnotherQuestion(t *testing.T) {
	z, err := Parse(strings.NewReader(workload.Zone(100)), workload.Origin, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, others := range []int{0, fewOrigins} { // warmed from step 3 at once, and in every step
		t.Run(fmt.Sprint(others+1, " zones"), func(t *testing.T) { withAnotherQuestion(t, z, others) })
	}
}

func withAnotherQuestion(t *testing.T, z *Zone, others int) {
	s := NewStore()
	must(t, s.Publish(nil, z, false))
	for i := range others {
		must(t, s.Publish(nil, genZone(t, fmt.Sprintf("z%d.example.", i), 1, 1), false))
	}
	q := question(t, "host1."+workload.Origin, dns.TypeA)
	for _, later := range [][]byte{nil, {1}, q[:3]} {
		for calls := range 7 { // the later octets after each call
			var note ahead.Note
			for range calls {
				s.Warm(&note, q)
			}
			step := note.Step
			s.Warm(&note, later)
			if (step == 1 || step == 3 || step == 6) && note.Step != ahead.Done { // the steps that read the question
				t.Fatalf("% x at step %d: step %d, want Done", later, step, note.Step)
			}
			s.Warm(&note, later)
			s.Warm(&note, later)
		}
	}
}

// TestWarmAllocatesNothing: warming a query, every step of it, among few
// zones and among many, allocates nothing (a key built on the stack and
// captured by an iterator's closure was moved to the heap: two
// allocations a query, which cost a server of 100,000 zones a third of
// its queries a second and its p99 to the collector).
func TestWarmAllocatesNothing(t *testing.T) {
	z, err := Parse(strings.NewReader(workload.Zone(100)), workload.Origin, "")
	if err != nil {
		t.Fatal(err)
	}
	for _, others := range []int{0, fewOrigins} {
		s := NewStore()
		must(t, s.Publish(nil, z, false))
		for i := range others {
			must(t, s.Publish(nil, genZone(t, fmt.Sprintf("z%d.example.", i), 1, 1), false))
		}
		q := question(t, "host1."+workload.Origin, dns.TypeA)
		if allocs := testing.AllocsPerRun(100, func() {
			var note ahead.Note
			for note.Step != ahead.Done {
				s.Warm(&note, q)
			}
			note = ahead.Note{}
			for note.Step != ahead.Done {
				s.WarmZone(&note, q)
			}
		}); allocs != 0 {
			t.Errorf("among %d zones: %.1f allocations a query warmed", others+1, allocs)
		}
	}
}

// TestWarmFetchesTheCover: a question with DO for a name an NSEC3 zone
// lacks warms, after the name's step, the NSEC3 record that covers the
// name's hash, the one its denial reads (Zone.cover); for names beside
// nearly every record of the chain. Without DO, or in a zone
// without NSEC3, the warming ends at the name.
func TestWarmFetchesTheCover(t *testing.T) {
	s, zones := conformanceStore(t)
	z := zones[2] // nsec3.test
	if len(z.nsec3) < 10 {
		t.Fatalf("nsec3.test holds %d NSEC3 records: the test tests little", len(z.nsec3))
	}
	covers := map[*nsec3Node]bool{}
	for i := range 2000 {
		name := fmt.Sprintf("absent-%d.nsec3.test.", i)
		k, _ := key(name)
		if z.node(k) != nil {
			t.Fatalf("%s is in the zone", name)
		}
		q := question(t, name, dns.TypeA)
		note := ahead.Note{DO: true}
		steps := 0
		for ; note.Step != ahead.Done && steps < 20; steps++ {
			s.Warm(&note, q)
		}
		want := z.cover(k)
		if note.Q != unsafe.Pointer(want) {
			t.Fatalf("%s: warmed %p after %d steps, want its cover %p (%s)", name, note.Q, steps, want, want.hash)
		}
		covers[want] = true
		note = ahead.Note{}
		for steps = 0; note.Step != ahead.Done && steps < 20; steps++ {
			s.Warm(&note, q)
		}
		if note.Q != nil || note.Step != ahead.Done {
			t.Fatalf("%s without DO: %+v, want nothing past the name", name, note)
		}
	}
	if len(covers) < len(z.nsec3)*9/10 {
		t.Fatalf("names covered by %d of the %d NSEC3 records: most spans were never tried", len(covers), len(z.nsec3))
	}
	note := ahead.Note{DO: true}
	for range 20 {
		s.Warm(&note, question(t, "absent.example.org.", dns.TypeA)) // no NSEC3
	}
	if note.Q != nil || note.Step != ahead.Done {
		t.Fatalf("absent.example.org.: %+v, want nothing past the name", note)
	}
}
