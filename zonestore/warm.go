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
//  1. the zone that holds the name, and the slot of its index where the
//     search for the name begins;
//  2. the name's node (two lines: a node fits 128 octets);
//  3. the node's key, which the lookup compares, and its RRsets;
//  4. the records of the RRset of the question's type (or the CNAME);
//  5. the first two of those records;
//  6. their owner names, which the answer compares with the question's,
//     and an A or AAAA record's address.
//
// A zone of fewer than indexMin names has no index: its array of names
// (few.go) stands in for the slot. A name that no zone holds is not
// warmed. A name its zone does not hold warms the slot only: the lookup
// then walks up its ancestors, the apex's among them.
func (s *Store) Warm(note *ahead.Note, question []byte) {
	if note.Step == 0 {
		note.Step = ahead.Done // unless this step finds the name's slot
		z, h := s.slotOf(question)
		if z != nil {
			note.P, note.W, note.Step = unsafe.Pointer(z), h, 1
			ahead.Prefetch(z.slotLine(h))
		}
		return
	}
	switch note.Step {
	case 1:
		n := (*Zone)(note.P).likely(note.W)
		if n == nil {
			note.Step = ahead.Done
			return
		}
		note.Q = unsafe.Pointer(n)
		ahead.Prefetch(uintptr(note.Q))
		ahead.Prefetch(uintptr(note.Q) + 64)
	case 2:
		n := (*node)(note.Q)
		ahead.Prefetch(uintptr(unsafe.Pointer(unsafe.StringData(n.key))))
		if len(n.rrsets) == 0 {
			note.Step = ahead.Done
			return
		}
		ahead.Prefetch(uintptr(unsafe.Pointer(&n.rrsets[0])))
		ahead.Prefetch(uintptr(unsafe.Pointer(&n.rrsets[len(n.rrsets)-1])))
	case 3:
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
	case 4:
		set := (*rrset)(note.Q)
		for _, rr := range set.rrs[:min(2, len(set.rrs))] {
			ahead.Prefetch(uintptr((*[2]unsafe.Pointer)(unsafe.Pointer(&rr))[1])) // the record the interface holds
		}
	case 5:
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
	default:
		return
	}
	note.Step++
}

// slotOf returns the zone that holds the name of question and the name's
// hash in its index, or among its few names (few.go); nil for any other
// question.
func (s *Store) slotOf(question []byte) (*Zone, uint64) {
	var room [maxName + 8]byte
	k, ok := lowerWire(&room, question)
	if !ok {
		return nil, 0
	}
	switch z := s.zoneOf(k); {
	case z == nil:
		return nil, 0
	case z.idx != nil:
		return z, z.idx.hashOf(k)
	case len(z.few) > 0:
		return z, fewHash(k)
	}
	return nil, 0
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
