package zonestore

import (
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"

	"github.com/miekg/dns"
)

// Store holds the zones a server answers for. Readers (Find, Get) take no
// lock, hold no reference count and write no shared memory: they load the
// zone index and then one zone's current version, each with one atomic load,
// and use that version for the whole query. Go's garbage collector is the
// RCU grace period: a replaced version is freed when the last query holding
// it returns.
type Store struct {
	index atomic.Pointer[origins] // the zones' slots by origin (origins.go); replaced whole when zones come or go
	gen   atomic.Uint64           // generation counter for published versions

	mu sync.Mutex // serialises writers that change the index; never taken by readers
}

// slot is one zone's place in the store. Its pointer is swapped by
// compare-and-swap, so a version is published only over the one it was built from.
type slot struct {
	cur    atomic.Pointer[Zone]
	key    string // the origin's key
	origin string
}

// ErrStale is returned by Publish when the version it would replace is no
// longer current, or the new serial is not newer: another writer got there first.
var ErrStale = errors.New("zone changed since this version was built")

// NewStore returns an empty Store.
func NewStore() *Store {
	s := &Store{}
	s.index.Store(newOrigins(0, func(func(*slot) bool) {}))
	return s
}

// Name is a query name prepared once for a query: as asked (its case is
// kept in answers) and as its lookup key, which both Store.FindName and
// Zone.Answer use, so the key is computed once per query.
type Name struct {
	text string
	key  string
}

// NewName prepares qname; it fails for a name that is not a valid domain name.
func NewName(qname string) (Name, error) {
	k, err := key(qname)
	return Name{text: qname, key: k}, err
}

// NewNameIn is NewName with the key written into room where it fits, so
// that a caller who allocates per query anyway carries it there instead of
// in an allocation of its own (a longer key goes to one). room is the
// Name's from then on: it must not be written again while the Name or
// anything made from it is in use.
func NewNameIn(qname string, room []byte) (Name, error) {
	b, err := appendKey(room[:0], qname)
	if err != nil {
		return Name{text: qname}, err
	}
	return keyedName(qname, b), nil
}

// keyedName is the Name qname whose key is b, where b holds one.
func keyedName(qname string, b []byte) Name {
	if len(b) == 0 {
		return Name{text: qname}
	}
	return Name{text: qname, key: unsafe.String(&b[0], len(b))}
}

// NewNameKeyed is NewNameIn for a name whose key is made already, key:
// it is copied into room where it fits (elsewhere, into an allocation of
// its own). A query whose key was made on the stack, to find its zone and
// its kept answer, copies it into its answer rather than make it again.
// (A method of that Name would return its text, and the escape analysis,
// which does not tell a struct's fields apart, would then move the stack
// room that holds its key to the heap: an allocation a query.)
func NewNameKeyed(qname, key string, room []byte) Name {
	if len(key) > len(room) {
		return Name{text: qname, key: strings.Clone(key)}
	}
	return keyedName(qname, room[:copy(room, key)])
}

// Key is the name's lookup key: its wire form, lowercased, the same
// however the name is spelled (QuestionKey's for a question's name).
func (n Name) Key() string { return n.key }

// Find returns the current version of the zone that holds qname: the
// longest origin that qname is at or below. It costs one probe of the
// origins' table per label of qname that some origin has as many of
// (origins.suffixes), whatever the number of zones.
func (s *Store) Find(qname string) *Zone {
	n, err := NewName(qname)
	if err != nil {
		return nil
	}
	return s.FindName(n)
}

// FindName is Find for a prepared name.
func (s *Store) FindName(n Name) *Zone { return s.zoneOf(n.key) }

// zoneOf is FindName for the key k.
func (s *Store) zoneOf(k string) *Zone { return s.zoneOfIn(s.index.Load(), k) }

// zoneOfIn is zoneOf among the origins of idx.
func (s *Store) zoneOfIn(idx *origins, k string) *Zone {
	for k, n := idx.suffixes(k); n > 0; k, n = parentKey(k), n-1 {
		if sl := idx.get(k); sl != nil {
			if z := sl.cur.Load(); z != nil {
				return z
			}
		}
	}
	return nil
}

// Origins returns the origins of the zones in the store, and of the places
// reserved for zones to come (Reserve), which Get finds without a version.
func (s *Store) Origins() []string {
	idx := s.index.Load()
	out := make([]string, 0, idx.n)
	for sl := range idx.all() {
		out = append(out, sl.origin)
	}
	return out
}

// Generation is the generation of the last version published in the
// store, of any zone: it moves with every version published.
func (s *Store) Generation() uint64 { return s.gen.Load() }

// Get returns the current version of the zone with this origin, or nil.
// The origin's key is made on the stack and only compared, so a Get
// allocates nothing: a look at each of a catalog's 100,000 members (a
// scrape's count, the bulk load's watch, readiness) allocated one each.
func (s *Store) Get(origin string) *Zone {
	var buf [maxName + 1]byte
	b, err := appendKey(buf[:0], origin)
	if err != nil {
		return nil
	}
	if sl := s.index.Load().get(keyOfBytes(b)); sl != nil {
		return sl.cur.Load()
	}
	return nil
}

// Publish makes z the current version of its zone, replacing old, which must
// be the version z was built against (nil for a zone not yet served). It
// fails with ErrStale if another version was published since, or if z's
// serial is not newer than old's (RFC 1982 arithmetic) unless force is set.
func (s *Store) Publish(old, z *Zone, force bool) error {
	if z == nil {
		return errors.New("publish: nil zone")
	}
	if old != nil && old.originKey != z.originKey {
		return fmt.Errorf("publish: zone %q cannot replace zone %q", z.origin, old.origin)
	}
	if old != nil && !force && !SerialNewer(z.serial, old.serial) {
		return fmt.Errorf("%w: zone %q serial %d is not newer than %d", ErrStale, z.origin, z.serial, old.serial)
	}
	sl := s.slotFor(z)
	z.generation = s.gen.Add(1)
	if !sl.cur.CompareAndSwap(old, z) {
		return fmt.Errorf("%w: zone %q", ErrStale, z.origin)
	}
	return nil
}

// Remove stops serving the zone with this origin.
func (s *Store) Remove(origin string) { s.RemoveAll([]string{origin}) }

// RemoveAll stops serving the zones with these origins, with one copy of
// the index.
func (s *Store) RemoveAll(origins []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.index.Load()
	drop := make(map[string]bool, len(origins))
	for _, o := range origins {
		if k, err := key(o); err == nil && old.get(k) != nil {
			drop[k] = true
		}
	}
	if len(drop) == 0 {
		return
	}
	s.index.Store(newOrigins(old.n-len(drop), func(yield func(*slot) bool) {
		for sl := range old.all() {
			if !drop[sl.key] && !yield(sl) {
				return
			}
		}
	}))
}

// Change is one version to publish: New over Old (nil for a new zone),
// with Force as for Publish.
type Change struct {
	Old, New *Zone
	Force    bool
}

// PublishAll publishes every change as Publish does, each on its own (one
// may fail, the others stand), adding the new zones to the index with one
// copy of it: a directory of a million zones loads in linear time, where
// a million calls of Publish would copy the index a million times.
func (s *Store) PublishAll(cs []Change) []error {
	var fresh []*Zone
	for _, c := range cs {
		if c.New != nil && c.Old == nil {
			fresh = append(fresh, c.New)
		}
	}
	s.addSlots(fresh)
	errs := make([]error, len(cs))
	for i, c := range cs {
		errs[i] = s.Publish(c.Old, c.New, c.Force)
	}
	return errs
}

// slotFor returns the zone's slot, adding it to the index if new.
func (s *Store) slotFor(z *Zone) *slot {
	if sl := s.index.Load().get(z.originKey); sl != nil {
		return sl
	}
	s.addSlots([]*Zone{z})
	return s.index.Load().get(z.originKey)
}

// addSlots adds a slot for each zone not in the index, copying the index
// once (copy on write: readers keep the map they loaded).
func (s *Store) addSlots(zs []*Zone) {
	places := make([]*slot, 0, len(zs))
	for _, z := range zs {
		places = append(places, &slot{key: z.originKey, origin: z.origin})
	}
	s.addPlaces(places)
}

// Reserve adds a place for each zone of origins not in the store yet, with
// one copy of the index, so that their first versions, published one at a
// time (a catalog's members, each as its transfer ends), find their places
// made. Each place added copies the index: 10,000 zones added one by one
// copied it 10,000 times, and the garbage took a secondary of 10,000 small
// zones to 640 MB resident, 5.9 kB a record, where their files took 0.4
// kB (bench/zones.sh). A place without a version is no zone: Find passes
// it by, Get returns nil; Remove takes it out.
func (s *Store) Reserve(origins []string) {
	places := make([]*slot, 0, len(origins))
	for _, o := range origins {
		if k, err := key(o); err == nil {
			places = append(places, &slot{key: k, origin: dns.CanonicalName(o)})
		}
	}
	s.addPlaces(places)
}

// addPlaces adds to the index the places whose keys it does not hold yet,
// with one copy of it.
func (s *Store) addPlaces(places []*slot) {
	if len(places) == 0 {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	old := s.index.Load()
	fresh := make(map[string]*slot)
	for _, sl := range places {
		if old.get(sl.key) == nil && fresh[sl.key] == nil {
			fresh[sl.key] = sl
		}
	}
	if len(fresh) == 0 {
		return
	}
	s.index.Store(newOrigins(old.n+len(fresh), func(yield func(*slot) bool) {
		for sl := range old.all() {
			if !yield(sl) {
				return
			}
		}
		for _, sl := range fresh {
			if !yield(sl) {
				return
			}
		}
	}))
}

// SerialNewer reports whether serial a is newer than b in serial number
// arithmetic (RFC 1982): what a store, a secondary and an IXFR compare.
func SerialNewer(a, b uint32) bool { return a != b && int32(a-b) > 0 }
