package replay

import (
	"bytes"
	"hash/maphash"
	"sync/atomic"

	"github.com/miekg/dns"
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

// Cache holds up to its size of answers, by key (Key) and zone version.
// It is one goroutine's at a time.
type Cache struct {
	sets []set
	mask uint64

	// What the last Find was asked, for Keep: the request's key, its
	// question's hash, and whether its answer may be kept.
	key      []byte
	hash     uint64
	keepable bool
	out      []byte // room for the answer Keep is given, reused
	hit      Answer // what Find returns

	counts *Counts
}

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
type slot struct {
	hash uint64
	kept *byte // the kept octets (kept.go): a header, the key, the answer; nil for an empty slot
}

// New returns a Cache for size answers (rounded up to a power of two, at
// least a set), which counts its hits and misses in counts.
func New(size int, counts *Counts) *Cache {
	n := 1
	for n*ways < size {
		n *= 2
	}
	return &Cache{sets: make([]set, n), mask: uint64(n - 1), counts: counts}
}

// Hash is the hash of a question, by which its answers are placed: key
// is its name in a form that is the same however the name is spelled (a
// zone's lookup key, lowercased), the same form Warm is given. Every way
// of asking the question (the name's case, the EDNS record) is placed in
// the same set, and told apart there by its whole Key.
func (c *Cache) Hash(key string, qtype uint16) uint64 {
	return maphash.String(seed, key) + uint64(qtype)*0x9e3779b97f4a7c15
}

// seed is every Cache's: a question hashes the same in each, so a hash
// taken with one P's cache (warming) places it in another's too.
var seed = maphash.MakeSeed()

// Find returns the answer kept for request r, whose question hashes to
// qh (Hash), from the zone version version, or nil. The answer is the
// Cache's: its Wire may be written (SetID) until the Cache is used again.
// Where r's answer may be kept (Key), a Keep after Find keeps it.
func (c *Cache) Find(r *dns.Msg, qh, version uint64) *Answer {
	c.key, c.keepable = Key(c.key[:0], r)
	if !c.keepable || version == 0 {
		c.keepable = false
		return nil
	}
	c.hash = qh
	s := &c.sets[qh&c.mask]
	for i := range s {
		if s[i].hash != qh || s[i].kept == nil {
			continue
		}
		k := keptAt(s[i].kept)
		if k.version() == version && bytes.Equal(k.key(), c.key) {
			c.counts.Hits.Store(c.counts.Hits.Load() + 1)
			c.hit = Answer{Wire: k.wire(), Rcode: k.rcode(), Len: k.msgLen(), Subject: k.subject()}
			return &c.hit
		}
	}
	c.counts.Misses.Store(c.counts.Misses.Load() + 1)
	return nil
}

// Room returns room to pack an answer into, for Keep: the Cache's own,
// reused.
func (c *Cache) Room() []byte { return c.out[:0] }

// Keep keeps a copy of a, answered from version, for the request of the
// last Find, where that request's answer may be kept. An answer longer
// than MaxWire is not kept. It takes the place of the answer to the same
// key (from an older version), or of an empty slot, or, where there is
// neither, of one the question's hash chooses; it reuses that slot's
// octets where they have room.
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
		if s[i].kept == nil || s[i].hash == h && bytes.Equal(keptAt(s[i].kept).key(), c.key) {
			w = i
			break
		}
	}
	var old kept
	if s[w].kept != nil {
		old = keptAt(s[w].kept)
	}
	k := old.fill(version, c.key, a)
	s[w].hash, s[w].kept = h, &k[0]
}
