package replay

import (
	"bytes"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"
)

// packed is a stand-in for a packed answer of n octets, all of them fill.
func packed(n int, fill byte) []byte { return bytes.Repeat([]byte{fill}, n) }

// find is c.Find with the question's hash of the name lowercased (a
// zone's key is, but any form the same for every spelling will do).
func find(c *Cache, r *dns.Msg, version uint64) *Answer {
	q := r.Question[0]
	return c.Find(r, false, Hash(strings.ToLower(q.Name), q.Qtype), version)
}

// keep keeps wire as the answer to r, from version: a question is kept
// at its second miss where nothing was kept for it before (admit.go).
func keep(c *Cache, r *dns.Msg, version uint64, wire []byte) {
	miss(c, r, version)
	c.Keep(version, Answer{Wire: append(c.Room(), wire...), Rcode: 3, Len: 77, Subject: 0x0123456789abcdef})
}

// miss finds r's answer, which must not be kept, once or, where the
// Cache would not keep it at the first miss, twice: a Keep after it keeps.
func miss(c *Cache, r *dns.Msg, version uint64) {
	for range 2 {
		if find(c, r, version) != nil {
			panic("kept already")
		}
		if c.Keeping() {
			return
		}
	}
}

func TestAnAnswerIsFoundForItsKeyAndVersion(t *testing.T) {
	var n Counts
	c := New(1024, &n)
	r := query("www.example.org.", dns.TypeA)
	wire := packed(40, 7)
	keep(c, r, 5, wire)
	wire[0] = 0 // the Cache keeps a copy

	a := find(c, r, 5)
	if a == nil {
		t.Fatal("not found")
	}
	if !bytes.Equal(a.Wire, packed(40, 7)) || a.Rcode != 3 || a.Len != 77 || a.Subject != 0x0123456789abcdef {
		t.Fatalf("found %v", a)
	}
	if find(c, r, 6) != nil {
		t.Fatal("found for another version of the zone")
	}
	if find(c, query("WWW.example.org.", dns.TypeA), 5) != nil {
		t.Fatal("found for another key")
	}
	if h, m := n.Hits.Load(), n.Misses.Load(); h != 1 || m != 4 {
		t.Fatalf("%d hits, %d misses; want 1 and 4 (two to keep it)", h, m)
	}
}

// An answer kept from a newer version takes the place of the old one: a
// key holds one slot, whichever version it was last kept from.
func TestANewVersionReplacesTheOld(t *testing.T) {
	c := New(4, new(Counts)) // one set
	r := query("www.example.org.", dns.TypeA)
	for v := uint64(1); v <= 8; v++ {
		keep(c, r, v, packed(20, byte(v)))
	}
	if a := find(c, r, 8); a == nil || a.Wire[0] != 8 {
		t.Fatalf("found %v for the last version", a)
	}
	others := 0
	for i := range 3 {
		keep(c, query(fmt.Sprintf("n%d.example.org.", i), dns.TypeA), 8, packed(20, 1))
	}
	for i := range 3 {
		if find(c, query(fmt.Sprintf("n%d.example.org.", i), dns.TypeA), 8) != nil {
			others++
		}
	}
	if others != 3 || find(c, r, 8) == nil {
		t.Fatalf("the set holds %d of the three other keys, and the first: want all four", others)
	}
}

// A set holds four answers; a fifth pushes out one of them, only one.
func TestAFullSetPushesOutOne(t *testing.T) {
	c := New(4, new(Counts))
	var rs []*dns.Msg
	for i := range 5 {
		rs = append(rs, query(fmt.Sprintf("n%d.example.org.", i), dns.TypeA))
		keep(c, rs[i], 1, packed(20, byte(i)))
	}
	found := 0
	for i, r := range rs {
		if a := find(c, r, 1); a != nil {
			found++
			if a.Wire[0] != byte(i) {
				t.Errorf("%s: another key's answer", r.Question[0].Name)
			}
		}
	}
	if found != 4 || find(c, rs[4], 1) == nil {
		t.Fatalf("%d found, the last kept among them: %v; want 4, true", found, find(c, rs[4], 1) != nil)
	}
}

// What is not to be kept is not: an answer past MaxWire, a request
// without a key, a zone not published (version 0), or a Keep without a
// Find before it (a second Keep).
func TestWhatIsNotKept(t *testing.T) {
	c := New(64, new(Counts))
	long := query("long.example.org.", dns.TypeTXT)
	keep(c, long, 1, packed(MaxWire+1, 1))
	c.Keep(1, Answer{Wire: packed(30, 2)}) // a second Keep for the Find in keep
	if find(c, long, 1) != nil {
		t.Error("kept an answer past MaxWire, or a second for one Find")
	}
	keep(c, long, 1, packed(MaxWire, 1))
	c.Keep(1, Answer{Wire: packed(MaxWire, 2)}) // a second Keep for one Find
	if a := find(c, long, 1); a == nil || a.Wire[0] != 1 {
		t.Error("did not keep an answer of MaxWire octets, or kept twice for one Find")
	}

	two := query("www.example.org.", dns.TypeA)
	two.Question = append(two.Question, two.Question[0])
	keep(c, two, 1, packed(30, 1))
	if find(c, two, 1) != nil {
		t.Error("kept the answer to a request without a key")
	}
	unpublished := query("new.example.org.", dns.TypeA)
	keep(c, unpublished, 0, packed(30, 1))
	if find(c, unpublished, 0) != nil {
		t.Error("kept an answer from version 0")
	}
}

func TestSetID(t *testing.T) {
	w := packed(12, 0)
	SetID(w, 0xabcd)
	if w[0] != 0xab || w[1] != 0xcd || w[2] != 0 {
		t.Fatalf("% x", w)
	}
}

// Each answer kept in a slot in turn, longer or shorter than the one
// before, is found whole, its own length, rcode and Msg.Len.
func TestEachAnswerKeptInASlotIsFoundWhole(t *testing.T) {
	c := New(4, new(Counts))
	r := query("www.example.org.", dns.TypeA)
	for v, n := range []int{300, 40, 200, 1000, 12} {
		version := uint64(v + 1)
		miss(c, r, version)
		c.Keep(version, Answer{Wire: packed(n, byte(v)), Rcode: v, Len: 10 * n})
		a := find(c, r, version)
		if a == nil || !bytes.Equal(a.Wire, packed(n, byte(v))) || a.Rcode != v || a.Len != 10*n {
			t.Fatalf("version %d: found %v, want %d octets", version, a, n)
		}
	}
}

// One Shared, a Cache a goroutine: an answer one keeps the others find,
// and what any of them finds is the answer kept for its question and
// version, however the keeps and finds of the others interleave (run
// with -race: every slot is read and written atomically, and a kept
// answer is never written again). Four questions share a set of four
// slots with two versions each, so keeps push each other out while
// others read.
func TestCachesShareTheirAnswers(t *testing.T) {
	shared := NewShared(4) // one set
	names := []string{"a.example.", "b.example.", "c.example.", "d.example."}
	answer := func(name string, version uint64) []byte {
		w := packed(12+int(version)*7+len(name), byte(version))
		copy(w[12:], name)
		return w
	}
	one := shared.Cache(new(Counts))
	keep(one, query(names[0], dns.TypeA), 1, answer(names[0], 1))
	if a := find(shared.Cache(new(Counts)), query(names[0], dns.TypeA), 1); a == nil || !bytes.Equal(a.Wire, answer(names[0], 1)) {
		t.Fatalf("another Cache of the Shared found %v, want the answer kept", a)
	}

	var wg sync.WaitGroup
	var hits atomic.Int64
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := shared.Cache(new(Counts))
			for i := range 20000 {
				name := names[(g+i)%len(names)]
				version := uint64(1 + (i/3)%2)
				r := query(name, dns.TypeA)
				if a := find(c, r, version); a != nil {
					hits.Add(1)
					if !bytes.Equal(a.Wire, answer(name, version)) {
						errs <- fmt.Sprintf("%s version %d: found % x", name, version, a.Wire)
						return
					}
					SetID(a.Wire, uint16(i)) // the copy is the Cache's: no other sees it
					continue
				}
				c.Keep(version, Answer{Wire: append(c.Room(), answer(name, version)...)})
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Fatal(e)
	}
	if hits.Load() == 0 {
		t.Fatal("no Cache found an answer another kept")
	}
}

// TestProbesThinWhereQuestionsComeBackAnotherWay: a Cache looks for, and
// keeps, the answer of every question while its misses are new questions
// (a cold start, new names) or a new version's; once a window of Finds
// finds mostly answers kept for the same questions asked another way
// (each name in a case of its own, the 0x20 encoding), it probes one
// question in thinKeep and says so (Thin); a window with hits again
// probes every one.
func TestProbesThinWhereQuestionsComeBackAnotherWay(t *testing.T) {
	c := New(1<<16, new(Counts))
	name := func(i int, spelling int) *dns.Msg { // spelling's bits set the case of the letters, in turn
		n := []byte(fmt.Sprintf("name%d.example.org.", i))
		bit := 0
		for j := range n {
			if n[j] >= 'a' && n[j] <= 'z' {
				if spelling>>bit&1 == 1 {
					n[j] -= 'a' - 'A'
				}
				bit++
			}
		}
		return query(string(n), dns.TypeA)
	}
	probe := func(r *dns.Msg, version uint64) bool { // as the handler asks: whether it probed
		t.Helper()
		if !c.Probe() {
			return false
		}
		miss(c, r, version)
		c.Keep(version, Answer{Wire: append(c.Room(), packed(40, 1)...)})
		return true
	}
	for i := range 2 * keepWindow { // new names: all kept
		if !probe(name(i, 0), 1) {
			t.Fatalf("new question %d not kept", i)
		}
	}
	for i := range 2 * keepWindow { // a new version: all kept
		if !probe(name(i, 0), 2) {
			t.Fatalf("question %d of a new version not kept", i)
		}
	}
	if c.Thin() {
		t.Fatal("thin without a question asked another way")
	}
	// The same questions, each in a spelling of its own (odd: the first
	// letter in capitals, never the spelling kept).
	spelling := 1
	for range keepWindow - 1 {
		probe(name(spelling%64, spelling), 2)
		spelling += 2
	}
	probe(name(spelling%64, spelling), 2) // the window's last Find: thin from the next
	spelling += 2
	if !c.Thin() {
		t.Fatal("not thin after a window of questions asked another way")
	}
	kept := 0
	for range 4 * thinKeep {
		if probe(name(spelling%64, spelling), 2) {
			kept++
		}
		spelling += 2
	}
	if kept != 4 {
		t.Fatalf("thin: probed %d of %d questions, want one in %d", kept, 4*thinKeep, thinKeep)
	}
	// Questions asked again the same way: among the probes, hits; and
	// every question probed again.
	for i := 0; c.Thin(); i++ {
		if i > thinKeep*keepWindow {
			t.Fatal("still thin after a thin window's worth of hits")
		}
		if c.Probe() {
			find(c, name(i%64, 0), 2)
		}
	}
	for i := range thinKeep {
		if !probe(name(100_000+i, 0), 2) {
			t.Fatalf("after a window of hits, question %d not probed", i)
		}
	}
}

// An answer kept for a request over a stream is found only over a stream,
// and says so; one kept over UDP only over UDP.
func TestStreamsAreKeptApart(t *testing.T) {
	c := New(1024, new(Counts))
	r := query("www.example.org.", dns.TypeTXT)
	h := Hash("www.example.org.", dns.TypeTXT)
	for range 2 {
		c.Find(r, false, h, 1)
	}
	c.Keep(1, Answer{Wire: append(c.Room(), packed(40, 1)...)}) // UDP's, truncated to 512 say
	if a := c.Find(r, true, h, 1); a != nil {
		t.Fatal("a UDP answer found for a request over a stream")
	}
	c.Keep(1, Answer{Wire: append(c.Room(), packed(600, 2)...)}) // the stream's, whole
	if a := c.Find(r, true, h, 1); a == nil || !a.Stream || len(a.Wire) != 600 {
		t.Fatalf("over a stream: found %v", a)
	}
	if a := c.Find(r, false, h, 1); a == nil || a.Stream || len(a.Wire) != 40 {
		t.Fatalf("over UDP: found %v", a)
	}
}

// A flood of names, each asked once, makes a Cache thin after a window:
// it then looks for one question in thinKeep. Questions asked again
// bring it back after the window in which its probes find them; a load
// whose questions are each asked twice (a miss, then a miss kept) never
// makes it thin.
func TestProbesThinUnderAFloodOfNewNames(t *testing.T) {
	c := New(1024, new(Counts))
	probed := func(r *dns.Msg) bool { // as the handler asks, keeping what it may
		if !c.Probe() {
			return false
		}
		if find(c, r, 1) == nil && c.Keeping() {
			c.Keep(1, Answer{Wire: append(c.Room(), packed(40, 1)...)})
		}
		return true
	}
	for i := range keepWindow { // each asked twice: kept at the second
		probed(query(fmt.Sprintf("twice-%d.example.org.", i/2), dns.TypeA))
	}
	if c.Thin() {
		t.Fatal("thin after questions each asked twice")
	}
	for i := range keepWindow {
		probed(query(fmt.Sprintf("flood-%d.example.org.", i), dns.TypeA))
	}
	if !c.Thin() {
		t.Fatal("not thin after a window of names each asked once")
	}
	n := 0
	for i := range 4 * thinKeep {
		if probed(query(fmt.Sprintf("more-%d.example.org.", i), dns.TypeA)) {
			n++
		}
	}
	if n != 4 {
		t.Fatalf("thin: probed %d of %d questions, want one in %d", n, 4*thinKeep, thinKeep)
	}
	popular := query("twice-0.example.org.", dns.TypeA) // kept above
	for i := 0; c.Thin(); i++ {
		if i > thinKeep*keepWindow {
			t.Fatal("still thin after a thin window's worth of questions asked again")
		}
		probed(popular)
	}
}
