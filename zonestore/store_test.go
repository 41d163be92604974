package zonestore

import (
	"errors"
	"fmt"
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
		idx := map[string]*slot{}
		for i := range n {
			z := &Zone{origin: fmt.Sprintf("zone%d.example.", i)}
			z.originKey, _ = key(z.origin)
			sl := &slot{origin: z.origin}
			sl.cur.Store(z)
			idx[z.originKey] = sl
		}
		s.index.Store(&idx)
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
