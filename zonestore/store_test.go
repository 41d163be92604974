package zonestore

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
)

func TestStoreFindsLongestOrigin(t *testing.T) {
	s := NewStore()
	parent := genZone(t, "example.", 10, 1)
	child := genZone(t, "sub.example.", 10, 1)
	must(t, s.Publish(nil, parent, false))
	must(t, s.Publish(nil, child, false))
	for name, want := range map[string]*Zone{
		"example.": parent, "www.example.": parent, "sub.example.": child,
		"a.b.SUB.Example.": child, "example.net.": nil, ".": nil,
	} {
		if got := s.Find(name); got != want {
			t.Errorf("Find(%q) = %v, want %v", name, got, want)
		}
	}
	s.Remove("sub.example.")
	if got := s.Find("a.sub.example."); got != parent {
		t.Errorf("after Remove, Find = %v, want the parent", got)
	}
}

// TestGetAllocatesNothing: Get finds a zone by its origin in any case,
// and nothing for a name that is no origin or no name, with no allocation
// (a catalog's 100,000 members are each looked up at every scrape).
func TestGetAllocatesNothing(t *testing.T) {
	s := NewStore()
	z := genZone(t, "example.", 10, 1)
	must(t, s.Publish(nil, z, false))
	for name, want := range map[string]*Zone{"example.": z, "EXAMPLE.": z, "example": z, "www.example.": nil, "bad..name.": nil} {
		if got := s.Get(name); got != want {
			t.Errorf("Get(%q) = %v, want %v", name, got, want)
		}
	}
	if n := testing.AllocsPerRun(100, func() { s.Get("Example.") }); n != 0 {
		t.Errorf("Get allocates %v times", n)
	}
}

// TestManyZonesComeAndGo: zones published together (PublishAll) and one
// at a time, then half of them removed together (RemoveAll), then some
// of those published again: after each, every name finds the longest
// origin the store holds, a slot published once keeps its place (the
// version a later Publish replaces is the one found), and Origins lists
// the zones held and no other. Zones nested three deep are among them,
// under a zone that holds them all.
func TestManyZonesComeAndGo(t *testing.T) {
	s := NewStore()
	var zones []*Zone
	for i := range 600 {
		zones = append(zones, genZone(t, fmt.Sprintf("z%d.example.", i), 2, 1))
		if i%10 == 0 { // a zone below it, and one below that
			zones = append(zones, genZone(t, fmt.Sprintf("sub.z%d.example.", i), 2, 1), genZone(t, fmt.Sprintf("a.sub.z%d.example.", i), 2, 1))
		}
	}
	var together []Change
	for _, z := range zones[:len(zones)/2] {
		together = append(together, Change{New: z})
	}
	for _, err := range s.PublishAll(together) {
		must(t, err)
	}
	for _, z := range zones[len(zones)/2:] {
		must(t, s.Publish(nil, z, false))
	}
	top := genZone(t, "example.", 2, 1)
	must(t, s.Publish(nil, top, false))
	held := map[string]*Zone{"example.": top}
	for _, z := range zones {
		held[z.origin] = z
	}
	// check asks every zone's names and compares the answers with the
	// longest origin held.
	check := func(when string) {
		t.Helper()
		for _, z := range zones {
			for _, name := range []string{z.origin, "www." + z.origin, "x.y." + z.origin} {
				var want *Zone
				for o := name; want == nil && o != ""; o = o[strings.IndexByte(o, '.')+1:] {
					want = held[o]
				}
				if got := s.Find(strings.ToUpper(name)); got != want {
					t.Fatalf("%s: Find(%q) = %p, want %p (%v)", when, name, got, want, want != nil)
				}
			}
		}
		got := s.Origins()
		slices.Sort(got)
		var want []string
		for o := range held {
			want = append(want, o)
		}
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("%s: Origins has %d, want the %d held", when, len(got), len(want))
		}
	}
	check("published")
	var gone []string
	for i, z := range zones {
		if i%2 == 1 {
			gone = append(gone, z.origin)
			delete(held, z.origin)
		}
	}
	s.RemoveAll(gone)
	check("half removed")
	for i, z := range zones {
		if i%2 == 0 { // a new version of a zone still held
			v2 := genZone(t, z.origin, 3, 2)
			must(t, s.Publish(z, v2, false))
			zones[i], held[z.origin] = v2, v2
		}
	}
	for _, o := range gone[:len(gone)/3] {
		z := genZone(t, o, 2, 5)
		must(t, s.Publish(nil, z, false))
		held[o] = z
	}
	check("replaced and published again")
}

// TestFindProbesOnlyTheOriginsDepths: a search for a name's zone probes
// only the name's suffixes of as many labels as some origin has, and
// still finds the longest origin: whatever the name's depth, with
// origins one and three labels deep, as the depths change when zones
// come and go, and with the root zone among them (no label at all).
func TestFindProbesOnlyTheOriginsDepths(t *testing.T) {
	s := NewStore()
	org := genZone(t, "org.", 2, 1)
	deep := genZone(t, "a.b.example.", 2, 1)
	must(t, s.Publish(nil, org, false))
	must(t, s.Publish(nil, deep, false))
	probed := func(name string) []string {
		k, _ := key(name)
		var got []string
		for k, n := s.index.Load().suffixes(k); n > 0; k, n = parentKey(k), n-1 {
			got = append(got, fmt.Sprint(labelCount(k)))
		}
		return got
	}
	if got := strings.Join(probed("w.x.y.z.a.b.example."), " "); got != "3 2 1" {
		t.Fatalf("w.x.y.z.a.b.example.: probed suffixes of %s labels, want 3 2 1", got)
	}
	if got := strings.Join(probed("org."), " "); got != "1" {
		t.Fatalf("org.: probed %s, want 1", got)
	}
	for name, want := range map[string]*Zone{
		"w.x.y.z.a.b.example.": deep, "a.b.example.": deep, "b.example.": nil, "example.": nil,
		"www.org.": org, "org.": org, "org.example.": nil, ".": nil,
	} {
		if got := s.Find(name); got != want {
			t.Errorf("Find(%q) = %p, want %p", name, got, want)
		}
	}
	root, err := Parse(strings.NewReader(". 3600 IN SOA a.root. b.root. 1 2 3 4 5\n. 3600 IN NS a.root.\na.root. 3600 IN A 192.0.2.1\n"), ".", "")
	if err != nil {
		t.Fatal(err)
	}
	must(t, s.Publish(nil, root, false))
	s.Remove("a.b.example.")
	for name, want := range map[string]*Zone{
		"w.x.y.z.a.b.example.": root, "b.example.": root, ".": root, "www.org.": org, "x.y.org.": org,
	} {
		if got := s.Find(name); got != want {
			t.Errorf("with the root, without a.b.example.: Find(%q) = %p, want %p", name, got, want)
		}
	}
	if got := strings.Join(probed("x.y.org."), " "); got != "1 0" {
		t.Fatalf("x.y.org. with the root and org. held: probed %s, want 1 0", got)
	}
}

// TestPublishCompareAndSwap: a version is published only over the one it was
// built from, and only with a newer serial unless forced, so two racing
// writers cannot move a zone back in time.
func TestPublishCompareAndSwap(t *testing.T) {
	s := NewStore()
	v1 := genZone(t, "example.", 10, 1)
	v2 := genZone(t, "example.", 10, 2)
	v3 := genZone(t, "example.", 10, 3)
	must(t, s.Publish(nil, v1, false))
	if err := s.Publish(nil, v2, false); !errors.Is(err, ErrStale) {
		t.Fatalf("publishing over a zone believed absent: %v, want ErrStale", err)
	}
	must(t, s.Publish(v1, v3, false))
	if err := s.Publish(v1, v2, false); !errors.Is(err, ErrStale) {
		t.Fatalf("publishing over a replaced version: %v, want ErrStale", err)
	}
	if err := s.Publish(v3, genZone(t, "example.", 10, 3), false); !errors.Is(err, ErrStale) {
		t.Fatalf("publishing an equal serial: %v, want ErrStale", err)
	}
	older := genZone(t, "example.", 10, 2)
	if err := s.Publish(v3, older, false); !errors.Is(err, ErrStale) {
		t.Fatalf("publishing an older serial: %v, want ErrStale", err)
	}
	must(t, s.Publish(v3, older, true))
	if got := s.Get("example."); got != older || got.Generation() <= v3.Generation() {
		t.Fatalf("after a forced publish serving %v (generation %d)", got, got.Generation())
	}
	// Serial arithmetic wraps (RFC 1982): 1 is newer than 4294967295.
	hi := genZone(t, "wrap.", 1, 4294967295)
	must(t, s.Publish(nil, hi, false))
	must(t, s.Publish(hi, genZone(t, "wrap.", 1, 1), false))
}

// BenchmarkFind measures finding the zone of a name among 1,000 to
// 1,000,000 zones: the cost follows the labels of the name, not the zones.
func BenchmarkFind(b *testing.B) {
	for _, n := range []int{1000, 100000, 1000000} {
		s := NewStore()
		sls := make([]*slot, n)
		for i := range n {
			z := &Zone{origin: fmt.Sprintf("zone%d.example.", i)}
			z.originKey, _ = key(z.origin)
			sls[i] = &slot{key: z.originKey, origin: z.origin}
			sls[i].cur.Store(z)
		}
		s.index.Store(newOrigins(n, slices.Values(sls)))
		names := make([]string, 4096)
		for i := range names {
			names[i] = fmt.Sprintf("www.host.zone%d.example.", (i*7919)%n)
		}
		b.Run(fmt.Sprintf("zones=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if s.Find(names[i%len(names)]) == nil {
					b.Fatal("not found")
				}
			}
		})
	}
}

// TestSerialNewerWraps: serial number arithmetic (RFC 1982 section 3.2),
// across the wrap and at the distance where no order is defined.
func TestSerialNewerWraps(t *testing.T) {
	for _, tc := range []struct {
		a, b uint32
		want bool
	}{
		{1, 0, true}, {0, 1, false}, {7, 7, false},
		{5, 4294967290, true}, {4294967290, 5, false},
		{1<<31 - 1, 0, true}, {1 << 31, 0, false}, {0, 1 << 31, false},
	} {
		if got := SerialNewer(tc.a, tc.b); got != tc.want {
			t.Errorf("SerialNewer(%d, %d) = %v, want %v", tc.a, tc.b, got, tc.want)
		}
	}
}

// TestReservedPlaces: a place reserved for a zone to come is no zone: a
// name under it finds the zone above, Get finds no version; the zone's
// first version fills it; Remove takes the place out.
func TestReservedPlaces(t *testing.T) {
	s := NewStore()
	parent := genZone(t, "example.org.", 1, 1)
	if err := s.Publish(nil, parent, false); err != nil {
		t.Fatal(err)
	}
	s.Reserve([]string{"Sub.Example.ORG", "other.test."})
	if z := s.Find("www.sub.example.org."); z != parent {
		t.Fatalf("a name under a reserved place: zone %v, want example.org.", z)
	}
	if s.Get("sub.example.org.") != nil || len(s.Origins()) != 3 {
		t.Fatalf("a reserved place: Get %v, origins %v", s.Get("sub.example.org."), s.Origins())
	}
	idx := s.index.Load()
	sub := genZone(t, "sub.example.org.", 1, 1)
	if err := s.Publish(nil, sub, false); err != nil {
		t.Fatal(err)
	}
	if s.index.Load() != idx {
		t.Error("the first version of a reserved zone copied the index")
	}
	if z := s.Find("www.sub.example.org."); z != sub {
		t.Fatalf("once published: zone %v", z)
	}
	s.RemoveAll([]string{"other.test.", "sub.example.org."})
	if len(s.Origins()) != 1 || s.Find("www.sub.example.org.") != parent {
		t.Fatalf("removed: origins %v", s.Origins())
	}
}
