package replay

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// Warm has three steps for a question whose answer is kept (its set, the
// answer, its key and octets) and two for one whose is not, so the
// caller warms the lookup after those.
func TestWarmStepsUntilTheAnswer(t *testing.T) {
	s := NewShared(64)
	c := s.Cache(new(Counts))
	r := query("www.example.org.", dns.TypeA)
	keep(c, r, 1, packed(40, 1))
	kept := Hash(strings.ToLower(r.Question[0].Name), dns.TypeA)
	other := Hash("nx.example.org.", dns.TypeA)
	for step, want := range []bool{true, true, false} {
		if more := s.Warm(step, kept); more != want {
			t.Errorf("kept: step %d: more %v, want %v", step, more, want)
		}
	}
	for step, want := range []bool{true, false} {
		if more := s.Warm(step, other); more != want {
			t.Errorf("not kept: step %d: more %v, want %v", step, more, want)
		}
	}
	if s.Warm(3, kept) {
		t.Error("a step past the last")
	}
}
