package workload

import (
	"testing"

	"github.com/miekg/dns"
)

// TestQueriesAreValidNames: every query of the mix is a valid domain name in the zone.
func TestQueriesAreValidNames(t *testing.T) {
	for _, q := range Queries(1000, 5000) {
		if _, ok := dns.IsDomainName(q.Name); !ok || !dns.IsSubDomain(Origin, q.Name) || dns.StringToType[q.Type] == 0 {
			t.Fatalf("bad query %q %s", q.Name, q.Type)
		}
		if len(q.Name) > 1 && q.Name[0] == '.' {
			t.Fatalf("empty label in %q", q.Name)
		}
	}
}
