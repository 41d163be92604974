package zonestore

import (
	"encoding/binary"
	"hash/maphash"
	"unsafe"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/ahead"
)

// A query for a name an NSEC3 zone lacks, asked with DO, is denied with
// the NSEC3 record that covers the name's hash: under a flood of new
// names (a random-subdomain attack) a record picked at random among the
// zone's, its bucket, its prefix and the record itself each a cache miss
// (8% of such a flood's samples, the record alone 4%: bench/README.md,
// 2026-12-06). Warming fetches them in three steps once the name is known
// absent (Warm's step 4 finds no node): it hashes the name, as the denial
// will again, and fetches its bucket; then the bucket's prefixes and the
// records' places; then the record, its signature and their strings,
// which nsec3Home keeps in one allocation.
//
// The name hashed is the question's: the denial's next closer name where
// the name's parent exists, as under a flood of random labels below the
// apex. Where it does not, the record fetched is not the one read, and
// the query is answered as any other.
//
// Where the search of the bucket's prefixes alone tells which record
// covers the hash (no record's prefix is the hash's own), the note says
// which, and of which name (warmedCover): the denial reads the record from
// it instead of hashing the name and searching again, a second SHA-1 and
// a search of the bucket a query.
const (
	coverStep  = 16 // the bucket fetched
	coverStep2 = 17 // the prefixes and the records' places fetched
)

// warmCover starts the steps for the question's name, absent from z,
// or ends the warming where there is nothing to fetch: a query without
// DO, or a zone without an NSEC3 chain hashed with SHA-1 and a hex salt.
func warmCover(note *ahead.Note, z *Zone, question []byte) {
	if !note.DO || len(z.nsec3) == 0 || z.n3p == nil || z.n3p.Hash != dns.SHA1 || z.n3salt == nil {
		note.Step = ahead.Done
		return
	}
	var room [maxName + 8]byte
	k, ok := lowerWire(&room, question)
	if !ok {
		note.Step = ahead.Done
		return
	}
	var hroom [32]byte
	h := z.appendHash(hroom[:0], k)
	note.W = prefix8(unsafe.String(unsafe.SliceData(h), len(h)))
	note.V = coverCheck(k) // of the name hashed, whatever a later call is given
	ahead.Prefetch(uintptr(unsafe.Pointer(&z.nsec3Buckets.start[z.coverBucket(note.W)])))
	note.Step = coverStep
}

// coverBucket is the bucket of the hash whose prefix8 is p.
func (z *Zone) coverBucket(p uint64) uint32 {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], p)
	return hashSketch(unsafe.String(&b[0], len(b))) >> z.nsec3Buckets.shift
}

// warmCoverSteps takes the steps after warmCover's: coverStep and
// coverStep2, the only ones Warm hands it.
func warmCoverSteps(note *ahead.Note) {
	z := (*Zone)(note.P)
	start := z.nsec3Buckets.start
	b := z.coverBucket(note.W)
	lo, hi := int(start[b]), int(start[b+1])
	switch note.Step {
	case coverStep:
		if lo < hi {
			ahead.Prefetch(uintptr(unsafe.Pointer(&z.nsec3Prefix[lo])))
			ahead.Prefetch(uintptr(unsafe.Pointer(&z.nsec3Prefix[hi-1])))
		}
		ahead.Prefetch(uintptr(unsafe.Pointer(&z.nsec3[max(lo-1, 0)])))
		ahead.Prefetch(uintptr(unsafe.Pointer(&z.nsec3[max(hi-1, 0)])))
		note.Step = coverStep2
	case coverStep2:
		i := lo
		for i < hi && z.nsec3Prefix[i] < note.W {
			i++
		}
		// Every record before i sorts before the hash (those of earlier
		// buckets too); every one from i on after it, unless i's prefix is
		// the hash's, which only the whole hashes order.
		known := i == hi || z.nsec3Prefix[i] != note.W
		if i--; i < 0 {
			i = len(z.nsec3) - 1 // the chain wraps round
		}
		n := z.nsec3[i]
		note.Q = unsafe.Pointer(n)
		for off := range uintptr(512 / 64) { // an nsec3Home
			ahead.Prefetch(uintptr(note.Q) + off*64)
		}
		note.Step = ahead.Done
		if note.W = uint64(i); !known {
			note.V = 0
		}
	}
}

// coverCheck is what a note keeps of the name warmCover hashed (its V),
// for warmedCover to tell that the name a denial hashes is that one: a
// hash of its key, never 0. A note of any other warming, and one whose
// search of the prefixes did not tell the record, has V 0.
func coverCheck(k string) uint64 { return maphash.String(coverSeed, k) | 1 }

var coverSeed = maphash.MakeSeed()

// warmedCover returns the NSEC3 record that covers the hash of the name
// with wire key k, where note (the query's warming, or nil) found it for
// that name in z; nil otherwise. The record is z's own, found at the
// index the note keeps: a note of another step, another zone or version
// of it, or another name (a plugin before this one may have rewritten the
// question) gives nil, and the caller hashes the name.
func (z *Zone) warmedCover(note *ahead.Note, k string) *nsec3Node {
	if note == nil || note.V == 0 || note.Step != ahead.Done || note.P != unsafe.Pointer(z) ||
		note.W >= uint64(len(z.nsec3)) || unsafe.Pointer(z.nsec3[note.W]) != note.Q || note.V != coverCheck(k) {
		return nil
	}
	return z.nsec3[note.W]
}
