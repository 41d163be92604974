package replay

import (
	"bytes"
	"hash/maphash"
	"sync/atomic"
	"unsafe"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/hugeheap"
)

// MaxWire is the longest answer a Cache keeps: the EDNS buffer size of
// DNS flag day 2020. Longer ones are rare (a DNSKEY set, a large TXT) and
// are packed each time, so that what a Cache holds stays near its entries
// times a typical answer.
const MaxWire = 1232

// ways is how many answers share a set: a set's four slots are one cache
// line, read at once, and four keys can share one before any is pushed
// out.
const ways = 4

// Shared holds the answers kept, for every Cache made from it: a server
// keeps one, whatever its cores. Its slots are read and written with
// atomic loads and stores, and a kept answer is never written once its
// slot points at it, so that any number of Caches, on any cores, find and
// keep answers at once without a lock. A find writes nothing of it; only
// a keep (a question not found) writes a slot.
//
// Until 2026-12-05 each P had a cache of its own, which learnt every
// question apart and held a P's share of the answers: on 16 cores 2^15
// each, a third of the load test's questions.
type Shared struct {
	sets []set
	mask uint64
	// ghosts are the questions missed lately, that no answer is kept for
	// (admit.go): a slot a question, by its hash.
	ghosts []atomic.Uint32
}

// NewShared returns a Shared for size answers (rounded up to a power of
// two, at least a set).
//
// Its slots and ghosts are asked huge pages (internal/hugeheap's Advise)
// as they are made, before anything is written in them: a Shared is made
// with the first query a server may keep the answer of, after the pass
// that puts the zones loaded at the start in huge pages, and a find reads
// a set that nothing predicts, 8 MiB of them by default. Warming's
// prefetch of it had waited on the walk of the page table (3.7% of a
// core on the load test's mix, most of it the kept answers', which are
// objects of their own). In huge pages the mix answered 1.006x a
// CPU-second (bench/README.md, 2026-12-06).
func NewShared(size int) *Shared {
	n := 1
	for n*ways < size {
		n *= 2
	}
	s := &Shared{sets: make([]set, n), mask: uint64(n - 1), ghosts: make([]atomic.Uint32, n*ways)}
	hugeheap.Advise(unsafe.Pointer(unsafe.SliceData(s.sets)), uintptr(len(s.sets))*unsafe.Sizeof(set{}))
	hugeheap.Advise(unsafe.Pointer(unsafe.SliceData(s.ghosts)), uintptr(len(s.ghosts))*unsafe.Sizeof(atomic.Uint32{}))
	return s
}

// Cache finds and keeps answers in a Shared, and counts its finds in
// counts. It is one goroutine's at a time: it holds what the last Find
// was asked, for Keep, and the answer it found.
type Cache struct {
	sets   []set // the Shared's
	mask   uint64
	ghosts []atomic.Uint32 // the Shared's

	// What the last Find was asked, for Keep: the request's key, its
	// question's hash, and whether its answer may be kept.
	key      []byte
	hash     uint64
	keepable bool
	out      []byte // room for the answer Keep is given, reused
	wire     []byte // the answer found, copied: its ID is the request's (SetID)
	hit      Answer // what Find returns

	// The hits and near misses (Find) of the Finds of the current window,
	// and whether the last window was thin (Thin, Probe); skipped counts
	// the questions passed by since.
	winHits, winNear, winSeen, winFinds int
	thin                                bool
	skipped                             int

	counts *Counts
}

// keepWindow is how many Finds a Cache judges its hits by. A near miss is
// a Find that finds an answer kept for its question from the same version
// of the zone, but asked another way: its name in another case, another
// EDNS record. Where a window's near misses are more than thinOver times
// its hits and one Find in thinBelow or more, the questions come back,
// but seldom the same way (a resolver that sends each name in a case of
// its own: the 0x20 encoding), and a Cache looks for the answer of one
// question in thinKeep (Probe), keeping it where it misses. A Find that
// misses reads a set no warming fetched, keeping an answer packs it into
// the Cache's room and copies it into a new allocation, and warming
// fetched the other spelling's answer rather than the lookup's path:
// every query paid for all three, and the chain answered 0.74x Knot's
// queries a second where without replay it answered 0.95x
// (bench/README.md, 2026-12-06). A miss with no answer of its question
// kept (a cold start, a new version of the zone, new names) is no near
// miss: every one is kept, as before. Since, an answer that holds the
// question's case only in its question is found for every spelling
// (spelling.go): the near misses left are answers that hold the asked
// labels elsewhere (a DNAME's CNAME) and questions asked with other EDNS
// records.
//
// A window is thin too where fewer than one Find in thinBelow was of a
// question asked before (a hit, or a miss that admit.go keeps): a flood
// of names that do not exist, each asked once (a random-subdomain
// attack), which no kept answer serves. Each of its queries looked for
// an answer, wrote its question's ghost, and was warmed through the
// kept answers' set as well as its lookup's path: the chain answered
// 0.95x the queries a second it answered without replay on such a flood
// (bench/README.md, 2026-12-06). A load of questions asked again leaves
// the state at the first window whose probes find them.
const (
	keepWindow = 256
	thinOver   = 4
	thinBelow  = 16
	thinKeep   = 16
)

// Cache returns a Cache of s that counts its finds in counts.
func (s *Shared) Cache(counts *Counts) *Cache {
	return &Cache{sets: s.sets, mask: s.mask, ghosts: s.ghosts, counts: counts}
}

// New returns a Cache with a Shared of its own, for size answers.
func New(size int, counts *Counts) *Cache { return NewShared(size).Cache(counts) }

// Counts are a Cache's Find answers, for the metrics: its holder adds to
// them (a load and an atomic store, never contended), a scrape reads them
// from any goroutine. They fill a cache line, which no other core writes.
type Counts struct {
	Hits, Misses atomic.Uint64
	_            [48]byte
}

type set [ways]slot

// slot is a set's place for one answer: its question's hash beside the
// answer's octets, so that a set is searched without reading any answer
// but the one hit, and a hit reads the set's line and then the octets.
// The two are stored apart, so a find may read a hash and the answer of
// another question: it compares the kept answer's own key, as it must for
// a question that shares the hash.
type slot struct {
	hash atomic.Uint64
	kept atomic.Pointer[byte] // the kept octets (kept.go): a header, the key, the answer; nil for an empty slot
}

// Hash is the hash of a question, by which its answers are placed: key
// is its name in a form that is the same however the name is spelled (a
// zone's lookup key, lowercased), the same form Warm is given. Every way
// of asking the question (the name's case, the EDNS record) is placed in
// the same set, and told apart there by its whole Key.
func Hash(key string, qtype uint16) uint64 {
	return maphash.String(seed, key) + uint64(qtype)*0x9e3779b97f4a7c15
}

// seed is every Cache's: a question hashes the same in each, and the
// same without one (warming).
var seed = maphash.MakeSeed()

// Find returns the answer kept for request r, which came over a stream
// where stream (Key), whose question hashes to qh (Hash), from the zone
// version version, or nil. The answer is the
// Cache's copy: its Wire may be written (SetID) until the Cache is used
// again.
// Where r's answer may be kept (Key), and its question was asked before
// (admit.go), a Keep after Find keeps it: Keeping says so.
func (c *Cache) Find(r *dns.Msg, stream bool, qh, version uint64) *Answer {
	c.key, c.keepable = Key(c.key[:0], r, stream)
	if !c.keepable || version == 0 {
		c.keepable = false
		return nil
	}
	c.hash = qh
	s := &c.sets[qh&c.mask]
	near := false    // an answer kept for the question asked another way
	known := false   // an answer kept for the question, from any version, asked any way
	var spelled kept // one kept for it in another case, that answers any (spelling.go)
	for i := range s {
		if s[i].hash.Load() != qh {
			continue
		}
		p := s[i].kept.Load()
		if p == nil {
			continue
		}
		known = true
		k := keptAt(p)
		if k.version() != version {
			continue
		}
		if bytes.Equal(k.key(), c.key) {
			return c.found(k)
		}
		if spelled == nil && k.anyCase() && sameButCase(k.key(), c.key) {
			spelled = k
		}
		near = true
	}
	if spelled != nil {
		a := c.found(spelled)
		respell(a.Wire, r.Question[0].Name)
		a.AnyCase = true
		return a
	}
	c.counts.Misses.Store(c.counts.Misses.Load() + 1)
	c.keepable = known || c.missedBefore(qh)
	c.judge(false, near, c.keepable)
	return nil
}

// Keeping reports whether a Keep would keep the answer of the last Find's
// request: it may be kept (Key), was not found, and was asked before.
func (c *Cache) Keeping() bool { return c.keepable }

// found counts Find's hit of k, and returns the Cache's copy of k's
// answer.
func (c *Cache) found(k kept) *Answer {
	c.counts.Hits.Store(c.counts.Hits.Load() + 1)
	c.judge(true, false, true)
	c.wire = append(c.wire[:0], k.wire()...)
	c.hit = Answer{Wire: c.wire, Rcode: k.rcode(), Len: k.msgLen(), Subject: k.subject(), Stream: overStream(k.key())}
	return &c.hit
}

// judge counts a Find in the current window, a hit, a near miss, or one
// of a question asked before (seen: a hit, or a miss whose answer may be
// kept), and at the window's end judges whether the window was thin
// (keepWindow).
func (c *Cache) judge(hit, near, seen bool) {
	if hit {
		c.winHits++
	}
	if near {
		c.winNear++
	}
	if seen {
		c.winSeen++
	}
	if c.winFinds++; c.winFinds == keepWindow {
		otherWays := c.winNear > thinOver*c.winHits && c.winNear*thinBelow >= keepWindow
		fresh := c.winSeen*thinBelow < keepWindow
		c.thin = otherWays || fresh
		c.winHits, c.winNear, c.winSeen, c.winFinds = 0, 0, 0, 0
	}
}

// Thin reports whether the Cache's last window of Finds found more than
// thinOver near misses a hit, and one a thinBelow Finds or more
// (keepWindow): a question's kept answer is then not what warming should
// fetch, but its lookup's path. The set a question hashes
// to is the same for every spelling of it, so under the 0x20 encoding an
// answer is nearly always found kept there, for another spelling, and the
// lookup that followed the miss found its node cold.
func (c *Cache) Thin() bool { return c.thin }

// Probe reports whether to look for the next question's answer (Find),
// and keep it where it is not found (Keep): always but while the Cache is
// thin, and then for one question in thinKeep. A caller that does not
// probe answers as it would without replay.
func (c *Cache) Probe() bool {
	if !c.thin {
		return true
	}
	c.skipped++
	return c.skipped%thinKeep == 0
}

// Room returns room to pack an answer into, for Keep: the Cache's own,
// reused.
func (c *Cache) Room() []byte { return c.out[:0] }

// Keep keeps a copy of a, answered from version, for the request of the
// last Find, where that request's answer may be kept. An answer longer
// than MaxWire is not kept. It takes the place of the answer to the same
// key (from an older version), or of an empty slot, or, where there is
// neither, of one the question's hash chooses. The copy is a new
// allocation: the answer it replaces may be being read by another Cache.
// Two Caches keeping in one set at once may take the same slot: the
// answer of one of them is kept.
func (c *Cache) Keep(version uint64, a Answer) {
	if !c.keepable {
		return
	}
	c.keepable = false
	if len(a.Wire) > MaxWire || len(a.Wire) < 12 {
		return
	}
	if cap(a.Wire) > cap(c.out) {
		c.out = a.Wire[:0] // the room Room gave, grown
	}
	h := c.hash
	s := &c.sets[h&c.mask]
	w := int(h>>62) % ways
	for i := range s {
		p := s[i].kept.Load()
		if p == nil || s[i].hash.Load() == h && bytes.Equal(keptAt(p).key(), c.key) {
			w = i
			break
		}
	}
	k := newKept(version, c.key, a)
	s[w].kept.Store(&k[0])
	s[w].hash.Store(h)
}
