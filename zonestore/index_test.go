package zonestore

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
)

// holdsTheMap fails unless z's index finds what its map finds: every name
// of the zone, and names near them that the zone does not hold (a child, a
// sibling one octet off, the name in capitals).
func holdsTheMap(t *testing.T, z *Zone) {
	t.Helper()
	if z.idx == nil {
		t.Fatalf("zone %s of %d names has no index", z.origin, len(z.nodes))
	}
	for _, page := range z.idx.pages {
		for _, s := range page {
			if s.hash != 0 && z.nodes[s.n.key] != s.n {
				t.Fatalf("zone %s: index holds %q, which the map does not", z.origin, s.n.key)
			}
		}
	}
	for k, n := range z.nodes {
		if got := z.idx.get(k); got != n {
			t.Fatalf("zone %s: index finds %v for %q, the map %v", z.origin, got, k, n)
		}
		near := []string{"\x01x" + k, strings.ToUpper(k)}
		if len(k) > 1 {
			near = append(near, k[:1]+string(k[1]^1)+k[2:])
		}
		for _, o := range near {
			if got, want := z.idx.get(o), z.nodes[o]; got != want {
				t.Fatalf("zone %s: index finds %v for %q, the map %v", z.origin, got, o, want)
			}
		}
	}
}

// TestIndexHoldsEveryName: a zone's index finds the node of each name its
// map holds and nothing else, in the load test's zone, in the conformance
// suite's (whose answers Knot checks through the index, test/), and in
// each version of a zone edited: names added, removed, delegated.
func TestIndexHoldsEveryName(t *testing.T) {
	big, err := Parse(strings.NewReader(workload.Zone(50000)), workload.Origin, "")
	if err != nil {
		t.Fatal(err)
	}
	holdsTheMap(t, big)
	for _, z := range conformanceZones(t) {
		holdsTheMap(t, z)
	}

	rr := func(s string) dns.RR { return mustRR(t, s) }
	z := big
	for step, edit := range []struct{ del, add []string }{
		{add: []string{"new.a.b." + workload.Origin + " 300 A 192.0.2.1", "sub." + workload.Origin + " 300 NS ns.sub." + workload.Origin, "ns.sub." + workload.Origin + " 300 A 192.0.2.2"}},
		{del: []string{"new.a.b." + workload.Origin + " 300 A 192.0.2.1"}},
	} {
		b := z.Edit()
		must(t, b.Delete(soaRR(workload.Origin, z.Serial())))
		must(t, b.Add(soaRR(workload.Origin, z.Serial()+1), 0))
		for _, s := range edit.del {
			must(t, b.Delete(rr(s)))
		}
		for _, s := range edit.add {
			must(t, b.Add(rr(s), 0))
		}
		if z, err = b.Build(); err != nil {
			t.Fatal(err)
		}
		holdsTheMap(t, z)
		if _, gone := z.nodes["\x03new\x01a\x01b"+big.originKey]; gone != (step == 0) {
			t.Fatalf("edit %d did not do what the test means it to", step)
		}
	}
}

// hostsZone is example.org with hosts names h0 to h<hosts-1> beside its
// apex and ns1, each with an address.
func hostsZone(t *testing.T, hosts int) *Zone {
	t.Helper()
	var b strings.Builder
	b.WriteString(head)
	for i := range hosts {
		fmt.Fprintf(&b, "h%d A 192.0.2.1\n", i)
	}
	z, err := parse(t, b.String())
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// TestSmallZonesHaveNoIndex: a zone of fewer than indexMin names has
// neither an index nor a map: its names are in one array (few.go), and
// found there.
func TestSmallZonesHaveNoIndex(t *testing.T) {
	z := hostsZone(t, indexMin-3) // with the apex and ns1
	if z.Names() >= indexMin || z.idx != nil || z.nodes != nil || len(z.few) != z.Names() {
		t.Fatalf("a zone of %d names has an index (%v) or a map (%d names), or not its array (%d names)", z.Names(), z.idx != nil, len(z.nodes), len(z.few))
	}
	if r := z.Lookup("h0.example.org.", dns.TypeA, false); len(r.Answer) != 1 {
		t.Fatalf("h0: %v", r.Answer)
	}
}

// TestEditsCrossFromTheArrayToTheIndex: a small zone that an edit grows
// to indexMin names gets an index and a map in place of its array, and
// one that an edit shrinks below it the array again; every name is found
// in each version, and each version before keeps what it had.
func TestEditsCrossFromTheArrayToTheIndex(t *testing.T) {
	small := hostsZone(t, indexMin-3)
	holds := func(z *Zone, hosts int, indexed bool) {
		t.Helper()
		if got := z.idx != nil && z.nodes != nil && z.few == nil; got != indexed || (!indexed && (z.nodes != nil || len(z.few) != z.Names())) {
			t.Fatalf("%d names: index %v, map of %d, array of %d; want indexed %v", z.Names(), z.idx != nil, len(z.nodes), len(z.few), indexed)
		}
		for i := range hosts {
			name := fmt.Sprintf("h%d.example.org.", i)
			if r := z.Lookup(name, dns.TypeA, false); len(r.Answer) != 1 {
				t.Fatalf("%d names: %s answered %v", z.Names(), name, r.Answer)
			}
		}
		if r := z.Lookup(fmt.Sprintf("h%d.example.org.", hosts), dns.TypeA, false); r.Rcode != dns.RcodeNameError {
			t.Fatalf("%d names: a name beyond them answered %s", z.Names(), dns.RcodeToString[r.Rcode])
		}
	}
	holds(small, indexMin-3, false)

	e := small.Edit()
	for i := indexMin - 3; i < indexMin+2; i++ {
		must(t, e.Add(&dns.A{Hdr: dns.RR_Header{Name: fmt.Sprintf("h%d.example.org.", i), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: net.IPv4(192, 0, 2, 1)}, 0))
	}
	big, err := e.Build()
	if err != nil {
		t.Fatal(err)
	}
	holds(big, indexMin+2, true)
	holds(small, indexMin-3, false)

	e = big.Edit()
	for i := indexMin - 6; i < indexMin+2; i++ {
		must(t, e.Delete(&dns.A{Hdr: dns.RR_Header{Name: fmt.Sprintf("h%d.example.org.", i), Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: net.IPv4(192, 0, 2, 1)}))
	}
	smaller, err := e.Build()
	if err != nil {
		t.Fatal(err)
	}
	holds(smaller, indexMin-6, false)
	holds(big, indexMin+2, true)
}

// TestIndexFollowsEdits: an edit's index is its base's put right, not
// built again, and holds what the map holds after every edit of a run that
// adds and removes names at random (empty non-terminals with them), so
// that removals move back the slots behind them in every way a crowded
// table puts them; in a table of one page, and in one of several, where
// an edit copies only the pages it writes.
func TestIndexFollowsEdits(t *testing.T) {
	for _, hosts := range []int{40, 20000} { // one page of slots; sixteen
		t.Run(fmt.Sprint(hosts), func(t *testing.T) { followEdits(t, hosts) })
	}
}

func followEdits(t *testing.T, hosts int) {
	rng := rand.New(rand.NewPCG(1, uint64(hosts)))
	var b strings.Builder
	b.WriteString(head)
	have := map[string]bool{}
	for i := range hosts {
		fmt.Fprintf(&b, "h%d A 192.0.2.1\n", i)
		have[fmt.Sprintf("h%d", i)] = true
	}
	z, err := parse(t, b.String())
	if err != nil {
		t.Fatal(err)
	}
	holdsTheMap(t, z)
	rr := func(name string) dns.RR {
		r, err := dns.NewRR(name + ".example.org. 3600 A 192.0.2.1")
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	cloned, shared, pages := 0, 0, 0
	for round := range 200 {
		ed := z.Edit()
		must(t, ed.Delete(soaRR("example.org.", z.Serial())))
		must(t, ed.Add(soaRR("example.org.", z.Serial()+1), 0))
		for name := range have {
			if rng.IntN(max(8, hosts/2)) == 0 { // two a round, about
				must(t, ed.Delete(rr(name)))
				delete(have, name)
			}
		}
		for range rng.IntN(4) {
			name := fmt.Sprintf("n%d", rng.IntN(1000))
			if rng.IntN(3) == 0 {
				name += fmt.Sprintf(".d%d.e%d", rng.IntN(5), rng.IntN(5)) // below empty non-terminals
			}
			if !have[name] {
				must(t, ed.Add(rr(name), 0))
				have[name] = true
			}
		}
		next, err := ed.Build()
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if next.idx != nil && z.idx != nil && next.idx.seed == z.idx.seed {
			cloned++
			for i := range next.idx.pages {
				pages++
				if &next.idx.pages[i][0] == &z.idx.pages[i][0] {
					shared++
				}
			}
		}
		if next.idx != nil {
			holdsTheMap(t, next)
		}
		if z.idx != nil {
			holdsTheMap(t, z) // the version it was edited from, which queries may still read, unchanged
		}
		z = next
	}
	if cloned < 100 {
		t.Fatalf("%d of 200 edits put their base's index right; the rest built one", cloned)
	}
	t.Logf("%d edits put their base's index right, sharing %d of %d pages", cloned, shared, pages)
	if hosts > pageSize && shared < pages/2 {
		t.Fatalf("edits shared %d of %d pages with their base's index", shared, pages)
	}
}

// TestSearchesBeginAtEverySlot: the searches of a zone's index and of the
// store's table of origins begin at odd and even slots alike. A search of
// the index for a name it does not hold reads about as many slots as
// linear probing at its load reads, (1 + 1/(1-load)^2)/2 (Knuth); one of
// the table, one bucket, seldom two. Every hash has its lowest bit set (0
// marks an empty slot); where a search began at the hash's low bits,
// every search began at an odd slot, and a table half full was searched
// as if it were full: in a 50,000-host zone's index (load 0.38) a miss
// read 2.07 slots for the 1.81 predicted.
func TestSearchesBeginAtEverySlot(t *testing.T) {
	z := hostsZone(t, 50000)
	s := NewStore()
	for i := range 5000 {
		must(t, s.Publish(nil, genZone(t, fmt.Sprintf("z%d.example.", i), 1, 1), false))
	}
	origins := s.index.Load()
	for _, table := range []struct {
		name   string
		keys   []string
		home   func(k string) uint64
		search func(k string) int // slots read by a search for k, which the table does not hold
		load   float64
	}{
		{"index", slices.Collect(maps.Keys(z.nodes)),
			func(k string) uint64 { return z.idx.home(z.idx.hashOf(k)) },
			func(k string) int {
				n := 1
				for i := z.idx.home(z.idx.hashOf(k)); z.idx.slot(i).hash != 0; i = (i + 1) & z.idx.mask {
					n++
				}
				return n
			}, float64(len(z.nodes)) / float64(z.idx.mask+1)},
		{"origins", slices.Collect(func(yield func(string) bool) {
			for sl := range origins.all() {
				if !yield(sl.key) {
					return
				}
			}
		}),
			func(k string) uint64 { return origins.home(originHash(k)) },
			func(k string) int { // buckets read, each taken for one slot
				n := 1
				for b := origins.home(originHash(k)); origins.buckets[b][3].hash != 0; b = (b + 1) & origins.mask {
					n++
				}
				return n
			}, -1}, // buckets: see want below
	} {
		odd := 0
		for _, k := range table.keys {
			odd += int(table.home(k) & 1)
		}
		if share := float64(odd) / float64(len(table.keys)); share < 0.45 || share > 0.55 {
			t.Errorf("%s: %.2f of its %d keys begin their search at an odd slot", table.name, share, len(table.keys))
		}
		slots := 0
		const absent = 20000
		for i := range absent {
			k, _ := key(fmt.Sprintf("absent%d.example.", i))
			slots += table.search(k)
		}
		want := (1 + 1/((1-table.load)*(1-table.load))) / 2
		if table.load < 0 {
			// The origins' buckets: a search goes on past each full one,
			// so it reads 1/(1-f) of them where a share f is full and the
			// full ones are placed independently; a hash that clusters
			// them reads more. (Until 2026-12-06 this asked for 1.05 at
			// most, as if none were full: with this run's seed a share of
			// 2% to 5% is, and one run in seven failed.)
			full := 0
			for b := range origins.buckets {
				if origins.buckets[b][3].hash != 0 {
					full++
				}
			}
			want = 1 / (1 - float64(full)/float64(len(origins.buckets)))
		}
		if mean := float64(slots) / absent; mean > 1.05*want {
			t.Errorf("%s: a search for a key it does not hold reads %.2f slots, %.2f at its load of %.2f", table.name, mean, want, table.load)
		}
	}
}
