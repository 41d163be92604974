package replay

import (
	"unsafe"

	"github.com/ontimedns/ontime/internal/ahead"
)

// Warm takes the fetches of a question's answer, where one is kept, a step
// further, as a server's warming does for a query it will serve soon
// (internal/ahead): step 0 fetches the set of the question's hash qh
// (Hash), step 1 the first two lines of the first answer kept there for
// the question (its header, its key, the start of its octets), step 2
// the two after them, where it has them. It reports whether there is a
// step more: false after step 2, and after step 1 where no answer for the
// question is kept, so the lookup's path, not the answer, is the one to
// warm; step 1 then fetches the question's ghost (admit.go), which its
// miss reads: under a flood of new names that read was 6.6% of the
// server's time, nearly all of it waiting for the line. It writes
// nothing. It reads only what the Caches of s share, so a server warming
// a hand of queries need not take its P's Cache for each step (a
// sync.Pool's get and put, two a query more).
func (s *Shared) Warm(step int, qh uint64) (more bool) {
	set := &s.sets[qh&s.mask]
	switch step {
	case 0:
		ahead.Prefetch(uintptr(unsafe.Pointer(set)))
		return true
	case 1:
		if p := set.of(qh); p != nil {
			ahead.Prefetch(uintptr(unsafe.Pointer(p)))
			ahead.Prefetch(uintptr(unsafe.Pointer(p)) + 64)
			return true
		}
		ahead.Prefetch(uintptr(unsafe.Pointer(ghostAt(s.ghosts, qh))))
	case 2:
		if p := set.of(qh); p != nil {
			k := keptAt(p)
			for at, end := 128, headLen+k.keyLen()+k.wireLen(); at < end; at += 64 {
				ahead.Prefetch(uintptr(unsafe.Pointer(p)) + uintptr(at))
			}
		}
	}
	return false
}

// of is the first answer kept in the set for the question of hash qh.
func (s *set) of(qh uint64) *byte {
	for i := range s {
		if s[i].hash.Load() == qh {
			if p := s[i].kept.Load(); p != nil {
				return p
			}
		}
	}
	return nil
}
