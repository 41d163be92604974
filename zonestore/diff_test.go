package zonestore

import (
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
	if d := section(del); strings.Join(d, "|") != "gone.example.org.\t3600\tIN\tAAAA\t2001:db8::1|www.example.org.\t3600\tIN\tA\t192.0.2.2" {
		t.Errorf("deleted %q", d)
	}
	if a := section(add); strings.Join(a, "|") != "new.example.org.\t3600\tIN\tMX\t10 www.example.org.|www.example.org.\t3600\tIN\tA\t192.0.2.3" {
		t.Errorf("added %q", a)
	}
}

// TestDiffCarriesTheSOAsSignatures: the SOA is the difference's delimiter
// and is left out of it, but its signatures are not: the old serial's
// deleted and the new serial's added, as a secondary must apply them.
func TestDiffCarriesTheSOAsSignatures(t *testing.T) {
	version := func(serial, sig string) *Zone {
		z, err := parse(t, strings.Replace(head, " 1 7200 ", " "+serial+" 7200 ", 1)+
			"@ 3600 RRSIG SOA 13 2 3600 20460101000000 20260101000000 1 example.org. "+sig+"\n"+
			"www A 192.0.2.1\nwww 3600 RRSIG A 13 3 3600 20460101000000 20260101000000 1 example.org. AAAA\n")
		if err != nil {
			t.Fatal(err)
		}
		return z
	}
	old, new := version("1", "AAAA"), version("2", "BBBB")
	del, add := Diff(old, new)
	if len(del) != 1 || len(add) != 1 || del[0].(*dns.RRSIG).Signature != "AAAA" || add[0].(*dns.RRSIG).Signature != "BBBB" {
		t.Fatalf("deleted %v, added %v: want the old SOA's signature deleted, the new one's added, and nothing else", del, add)
	}
}
