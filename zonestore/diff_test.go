package zonestore

import (
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

// TestDiffIsWhatChanged: the difference between two versions, applied to
// the old one as an IXFR would be, gives the new one.
func TestDiffIsWhatChanged(t *testing.T) {
	old, err := parse(t, head+"www A 192.0.2.1\nwww A 192.0.2.2\nkeep TXT same\ngone AAAA 2001:db8::1\n@ 300 ALIAS cdn.example.net.\n")
	if err != nil {
		t.Fatal(err)
	}
	b := old.Edit()
	for _, s := range []string{"www.example.org. 3600 IN A 192.0.2.2", "gone.example.org. 3600 IN AAAA 2001:db8::1"} {
		rr, _ := dns.NewRR(s)
		if err := b.Delete(rr); err != nil {
			t.Fatal(err)
		}
	}
	for _, s := range []string{"www.example.org. 3600 IN A 192.0.2.3", "new.example.org. 3600 IN MX 10 www.example.org."} {
		rr, _ := dns.NewRR(s)
		b.Add(rr, 0)
	}
	new, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	del, add := Diff(old, new)
	got := func(rrs []dns.RR) (out []string) {
		for _, rr := range rrs {
			out = append(out, rr.String())
		}
		slices.Sort(out)
		return out
	}
	if d := got(del); strings.Join(d, "|") != "gone.example.org.\t3600\tIN\tAAAA\t2001:db8::1|www.example.org.\t3600\tIN\tA\t192.0.2.2" {
		t.Errorf("deleted %q", d)
	}
	if a := got(add); strings.Join(a, "|") != "new.example.org.\t3600\tIN\tMX\t10 www.example.org.|www.example.org.\t3600\tIN\tA\t192.0.2.3" {
		t.Errorf("added %q", a)
	}
}
