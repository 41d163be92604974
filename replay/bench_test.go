package replay

import (
	"fmt"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// BenchmarkFind finds answers kept for 4,096 questions: asked as kept
// (hit), each name in another case (a hit written with the question
// spelled as asked: spelling.go), and names never asked (a miss, whose
// ghost is read and written: admit.go). None allocates.
//
//	go test ./replay -run XXX -bench Find -benchmem
func BenchmarkFind(b *testing.B) {
	const n = 4096
	c := New(1<<16, new(Counts))
	kept := make([]*dns.Msg, n)
	for i := range kept {
		r := query(fmt.Sprintf("host%d.example.org.", i), dns.TypeA)
		kept[i] = r
		keep(c, r, 1, packedAnswer(b, r, r.Question[0].Name+" 300 IN A 192.0.2.1"))
	}
	// keep flags no answer AnyCase: keep them again, flagged.
	for _, r := range kept {
		miss(c, r, 2)
		c.Keep(2, Answer{Wire: append(c.Room(), packedAnswer(b, r, r.Question[0].Name+" 300 IN A 192.0.2.1")...), AnyCase: true})
	}
	other := make([]*dns.Msg, n)
	for i, r := range kept {
		other[i] = query(strings.ToUpper(r.Question[0].Name), dns.TypeA)
	}
	fresh := make([]*dns.Msg, n)
	for i := range fresh {
		fresh[i] = query(fmt.Sprintf("new%d.example.org.", i), dns.TypeA)
	}
	for _, c2 := range []struct {
		name string
		qs   []*dns.Msg
		hit  bool
	}{{"hit", kept, true}, {"another-case", other, true}, {"new-question", fresh, false}} {
		hashes := make([]uint64, n)
		for i, r := range c2.qs {
			hashes[i] = Hash(strings.ToLower(r.Question[0].Name), dns.TypeA)
		}
		b.Run(c2.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if a := c.Find(c2.qs[i%n], false, hashes[i%n], 2); (a != nil) != c2.hit {
					b.Fatalf("%s: found %v", c2.qs[i%n].Question[0].Name, a)
				}
			}
		})
	}
}
