package zonestore

import (
	"encoding/binary"
	"unsafe"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/ahead"
	"github.com/ontimedns/ontime/internal/swar"
)

// Warm implements ahead.Warmer's step for the store: each call for a
// query takes it one step down the path its lookup will read, each step's
// addresses read from what the step before fetched, so that each step's
// lines are on their way while other queries' steps are taken and the
// queries before it are served (internal/ahead). The steps:
//
//  0. the buckets of the store's table of origins (origins.go) where the
//     search for each of the name's suffixes begins;
//  1. the slot of the longest origin found there;
//  2. its zone's current version, and the origin's key, which the lookup
//     compares;
//  3. the slot of the zone's index where the search for the name begins
//     (a store of at most fewOrigins zones, whose table, slots and zones
//     the caches hold, finds the zone at once and goes on from here: a
//     server of one zone spared 2% of its queries a second; the log of
//     bench/README.md, 2026-12-06);
//  4. the name's node (two lines: a node fits 128 octets);
//  5. the node's key, which the lookup compares, and its RRsets;
//  6. the records of the RRset of the question's type (or the CNAME);
//  7. the first two of those records;
//  8. their owner names, which the answer compares with the question's,
//     and an A or AAAA record's address.
//
// A zone of fewer than indexMin names has no index: its array of names
// (few.go) stands in for the slot. A name that no zone holds is not
// warmed past the origins. A name its zone does not hold warms the slot
// only: the lookup then walks up its ancestors, the apex's among them.
func (s *Store) Warm(note *ahead.Note, question []byte) {
	switch note.Step {
	case 0:
		var room [maxName + 8]byte
		k, ok := lowerWire(&room, question)
		if !ok {
			note.Step = ahead.Done
			return
		}
		idx := s.index.Load()
		if idx.n <= fewOrigins { // the table, its slots and zones stay in the caches: on to step 3's end
			warmName(note, s.zoneOfIn(idx, k), k)
			return
		}
		for k, n := idx.suffixes(k); n > 0; k, n = parentKey(k), n-1 {
			ahead.Prefetch(idx.line(originHash(k)))
		}
		note.P = unsafe.Pointer(idx)
	case 1:
		var room [maxName + 8]byte
		k, ok := lowerWire(&room, question)
		if !ok { // not the question of the first call
			note.Step = ahead.Done
			return
		}
		idx := (*origins)(note.P)
		var sl *slot
		for k, n := idx.suffixes(k); n > 0 && sl == nil; k, n = parentKey(k), n-1 {
			sl = idx.likely(originHash(k))
		}
		if sl == nil {
			note.Step = ahead.Done
			return
		}
		note.P = unsafe.Pointer(sl)
		ahead.Prefetch(uintptr(note.P))
	case 2:
		sl := (*slot)(note.P)
		z := sl.cur.Load()
		if z == nil {
			note.Step = ahead.Done
			return
		}
		note.P = unsafe.Pointer(z)
		ahead.Prefetch(uintptr(note.P))
		ahead.Prefetch(uintptr(unsafe.Pointer(unsafe.StringData(sl.key))))
	case 3:
		var room [maxName + 8]byte
		k, ok := lowerWire(&room, question)
		if !ok { // not the question of the first call
			note.Step = ahead.Done
			return
		}
		warmName(note, (*Zone)(note.P), k)
		return
	default:
		s.warmNode(note, question)
		return
	}
	note.Step++
}

// warmName is Warm's step 3 for the name whose key is k, in z (nil: no
// zone holds it): the slot of z's index, or its array, where the search
// for the name begins. Step 0 takes it at once among few zones, with the
// key it made.
func warmName(note *ahead.Note, z *Zone, k string) {
	var h uint64
	var any bool
	if z != nil {
		h, any = z.nameHash(k)
	}
	if !any {
		note.Step = ahead.Done
		return
	}
	note.P, note.W, note.Step = unsafe.Pointer(z), h, 4
	ahead.Prefetch(z.slotLine(h))
}

// warmNode takes the steps from the name's node on (4 to 8 of Warm's).
func (s *Store) warmNode(note *ahead.Note, question []byte) {
	switch note.Step {
	case 4:
		n := (*Zone)(note.P).likely(note.W)
		if n == nil { // no such name: where its denial reads a random NSEC3 record, that (warmcover.go)
			warmCover(note, (*Zone)(note.P), question)
			return
		}
		note.Q = unsafe.Pointer(n)
		ahead.Prefetch(uintptr(note.Q))
		ahead.Prefetch(uintptr(note.Q) + 64)
	case 5:
		n := (*node)(note.Q)
		ahead.Prefetch(uintptr(unsafe.Pointer(unsafe.StringData(n.key))))
		if len(n.rrsets) == 0 {
			note.Step = ahead.Done
			return
		}
		ahead.Prefetch(uintptr(unsafe.Pointer(&n.rrsets[0])))
		ahead.Prefetch(uintptr(unsafe.Pointer(&n.rrsets[len(n.rrsets)-1])))
	case 6:
		if len(question) < 4 { // not the question of the first call
			note.Step = ahead.Done
			return
		}
		n := (*node)(note.Q)
		set := n.get(binary.BigEndian.Uint16(question[len(question)-4:]))
		if set == nil {
			set = n.get(dns.TypeCNAME)
		}
		if set == nil || len(set.rrs) == 0 {
			note.Step = ahead.Done
			return
		}
		note.Q = unsafe.Pointer(set)
		ahead.Prefetch(uintptr(unsafe.Pointer(&set.rrs[0])))
	case 7:
		set := (*rrset)(note.Q)
		for _, rr := range set.rrs[:min(2, len(set.rrs))] {
			ahead.Prefetch(uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&rr))[1])) // the record the interface holds
		}
	case 8:
		set := (*rrset)(note.Q)
		for _, rr := range set.rrs[:min(2, len(set.rrs))] {
			ahead.Prefetch(uintptr(unsafe.Pointer(unsafe.StringData(rr.Header().Name))))
			switch r := rr.(type) {
			case *dns.A:
				ahead.Prefetch(uintptr(unsafe.Pointer(unsafe.SliceData(r.A))))
			case *dns.AAAA:
				ahead.Prefetch(uintptr(unsafe.Pointer(unsafe.SliceData(r.AAAA))))
			}
		}
		note.Step = ahead.Done
		return
	case coverStep, coverStep2:
		warmCoverSteps(note)
		return
	default:
		return
	}
	note.Step++
}

// WarmZone is Warm only as far as the zone that holds the question's
// name (its steps 0 to 2, the zone's line fetched last): for a query
// whose answer is kept packed (replay), whose serving reads the zone's
// version, to check the answer against, and none of its names. Among
// fewOrigins zones or fewer, which the caches hold, it fetches nothing:
// a server of one zone answered 0.97x as many kept answers a second
// when it found the zone here too.
func (s *Store) WarmZone(note *ahead.Note, question []byte) {
	if note.Step == 0 && s.index.Load().n <= fewOrigins {
		note.Step = ahead.Done
		return
	}
	s.Warm(note, question)
	if note.Step >= 3 {
		note.Step = ahead.Done
	}
}

// fewOrigins is the most zones a store may hold for warming to find a
// name's zone in one step (Warm): 64 origins are a table of 2 KiB.
const fewOrigins = 64

// nameHash is k's hash among z's names: in its index, or its array
// (few.go); false for a zone of neither (none of its names).
func (z *Zone) nameHash(k string) (uint64, bool) {
	switch {
	case z.idx != nil:
		return z.idx.hashOf(k), true
	case len(z.few) > 0:
		return fewHash(k), true
	}
	return 0, false
}

// KeyRoom is the room QuestionKey needs for a key.
const KeyRoom = maxName + 8

// QuestionKey is the lookup key (Name.Key) of the name at the start of
// question, a question's wire form as Warm is given it, written in room;
// false where question is not one.
func QuestionKey(room *[KeyRoom]byte, question []byte) (string, bool) {
	return lowerWire(room, question)
}

// lowerWire is the key of the name at the start of question, in room: its
// ASCII letters lowercased, eight octets at a time. false where question
// is not a name's whole uncompressed wire form (labels of 63 octets at
// most, 255 octets in all) and four octets after it.
func lowerWire(room *[maxName + 8]byte, question []byte) (string, bool) {
	i := 0
	for i < len(question) && question[i] != 0 {
		if question[i] > 63 {
			return "", false
		}
		i += 1 + int(question[i])
	}
	end := i + 1 // past the root
	if end > maxName || end+4 != len(question) {
		return "", false
	}
	wire := unsafe.String(&question[0], end)
	for i := 0; i < end; i += 8 {
		binary.LittleEndian.PutUint64(room[i:], swar.Lower(swar.Word(wire, i)))
	}
	return unsafe.String(&room[0], end), true
}
