package zonestore

import (
	"fmt"
	"strings"
	"testing"

	"github.com/ontimedns/ontime/zonestore"
	"github.com/ontimedns/ontime/zonestore/secondary"
)

// TestDropLoadedLooksAtABoundedSlice: a turn of the bulk load's watch
// looks at n members at most, drops every loaded one it meets, goes on
// where the last turn stopped and round to the first, and keeps every
// member not loaded.
func TestDropLoadedLooksAtABoundedSlice(t *testing.T) {
	store := zonestore.NewStore()
	shared := secondary.Shared(secondary.Config{Store: store})
	var zones []*secondary.Zone
	loaded := map[*secondary.Zone]bool{}
	for i := range 10 {
		origin := fmt.Sprintf("z%d.test.", i)
		z := secondary.NewMember(shared, origin, "")
		zones = append(zones, z)
		if i%3 == 0 { // z0, z3, z6, z9 loaded
			v, err := zonestore.Parse(strings.NewReader("@ 3600 IN SOA ns hostmaster 1 7200 3600 1209600 300\n@ 3600 IN NS ns.example.\n"), origin, "")
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Publish(nil, v, false); err != nil {
				t.Fatal(err)
			}
			loaded[z] = true
		}
	}
	left, next := dropLoaded(append([]*secondary.Zone(nil), zones...), 0, 4)
	// Four looks: z0 (dropped, z9 moved into its place), z9 (dropped, z8
	// moved in), z8, z1.
	if len(left) != 8 || next != 2 {
		t.Fatalf("first turn: %d left, next %d; want 8 and 2", len(left), next)
	}
	left, next = dropLoaded(left, next, 4) // z2, z3 (dropped, z7 moved in), z7, z4
	if len(left) != 7 || next != 5 {
		t.Fatalf("second turn: %d left, next %d; want 7 and 5", len(left), next)
	}
	left, next = dropLoaded(left, next, 100) // round to the first: z6 dropped
	if len(left) != 6 {
		t.Fatalf("third turn: %d left, want 6", len(left))
	}
	for _, z := range left {
		if loaded[z] {
			t.Errorf("a loaded member kept: %v", z)
		}
	}
	if left, _ := dropLoaded(left, next, 100); len(left) != 6 {
		t.Errorf("members not loaded dropped: %d left, want 6", len(left))
	}
	if left, next := dropLoaded(nil, 5, 10); len(left) != 0 || next != 5 {
		t.Errorf("no members: %d left, next %d", len(left), next)
	}
}
