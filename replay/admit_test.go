package replay

import (
	"fmt"
	"testing"

	"github.com/miekg/dns"
)

// A question's answer is kept at its second miss, on any Cache of the
// Shared, not its first; at its first where an answer was kept for it
// before, from an older version or asked another way. Names each asked
// once (a random-subdomain flood) keep nothing, and push out nothing.
func TestAnAnswerIsKeptAtItsSecondMiss(t *testing.T) {
	shared := NewShared(1 << 10)
	c, other := shared.Cache(new(Counts)), shared.Cache(new(Counts))
	r := query("www.example.org.", dns.TypeA)
	wire := packed(40, 1)

	if find(c, r, 1) != nil || c.Keeping() {
		t.Fatal("a first miss would keep its answer")
	}
	c.Keep(1, Answer{Wire: append(c.Room(), wire...)})
	if find(c, r, 1) != nil {
		t.Fatal("kept at the first miss")
	}
	if !c.Keeping() {
		t.Fatal("a second miss would not keep its answer")
	}
	if find(other, query("mail.example.org.", dns.TypeA), 1) != nil || other.Keeping() {
		t.Fatal("another question's first miss would keep its answer")
	}
	if find(other, query("mail.example.org.", dns.TypeA), 1) != nil || !other.Keeping() {
		t.Fatal("a question missed on one Cache, then on another, would not be kept")
	}
	find(c, r, 1)
	c.Keep(1, Answer{Wire: append(c.Room(), wire...)})
	if find(c, r, 1) == nil {
		t.Fatal("not kept at the second miss")
	}

	// A flood of names asked once each, thousands a set: none kept, and the
	// answer kept before is still found.
	for i := range 100 * shared.mask {
		f := query(fmt.Sprintf("%08x.example.org.", i*0x9e3779b9), dns.TypeA)
		if find(c, f, 1) != nil || c.Keeping() {
			t.Fatalf("flood name %d found, or would be kept", i)
		}
		c.Keep(1, Answer{Wire: append(c.Room(), packed(40, 2)...)})
	}
	if a := find(c, r, 1); a == nil || a.Wire[0] != 1 {
		t.Fatalf("after the flood: found %v, want the answer kept before it", a)
	}

	// Kept before, its ghost long overwritten by the flood's: kept at the
	// first miss of a new version, or asked another way.
	if find(c, r, 2) != nil || !c.Keeping() {
		t.Error("a question kept from an older version would not be kept at its first miss of the new")
	}
	edns := query("www.example.org.", dns.TypeA)
	edns.SetEdns0(1232, false)
	if find(c, edns, 1) != nil || !c.Keeping() {
		t.Error("a question kept, asked with another EDNS record, would not be kept at its first miss")
	}
}
