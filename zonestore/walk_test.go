package zonestore

import (
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/alias/record"
)

// TestWalkSendsEveryRecordOnce: a transfer's walk sends the SOA first and
// every record the zone holds exactly once, ALIAS records as themselves.
func TestWalkSendsEveryRecordOnce(t *testing.T) {
	z, err := parse(t, head+"@ 300 ALIAS cdn.example.net.\nwww A 192.0.2.1\nwww AAAA 2001:db8::1\na.b.c TXT x\n")
	if err != nil {
		t.Fatal(err)
	}
	var got []dns.RR
	z.Walk(func(rrs []dns.RR) bool { got = append(got, rrs...); return true })
	if len(got) != z.Records() || got[0].Header().Rrtype != dns.TypeSOA {
		t.Fatalf("walked %d records (want %d), first %v", len(got), z.Records(), got[0])
	}
	seen := map[string]bool{}
	aliases := 0
	for _, rr := range got {
		if seen[rr.String()] {
			t.Fatalf("%v twice", rr)
		}
		seen[rr.String()] = true
		if record.Target(rr) == "cdn.example.net." {
			aliases++
		}
	}
	if aliases != 1 {
		t.Fatalf("ALIAS walked %d times", aliases)
	}
}
