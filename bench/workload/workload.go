// Package workload generates the benchmark zone and query mix: a zone of N
// hosts with the shapes production zones have, and queries spread over
// A, AAAA, CNAME, TXT, MX, NXDOMAIN, NODATA, wildcard, empty non-terminal and
// referral answers. The Go benchmarks and the loopback load test use the same one.
package workload

import (
	"fmt"
	"strings"
)

// Origin is the benchmark zone's origin.
const Origin = "bench.example."

// Zone returns the text of a zone file with n hosts.
func Zone(n int) string {
	var b strings.Builder
	b.Grow(n * 80)
	fmt.Fprintf(&b, "$ORIGIN %s\n$TTL 3600\n", Origin)
	b.WriteString("@ SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ NS ns1\n@ NS ns2\n@ MX 10 mail\n@ TXT \"v=spf1 mx -all\"\n")
	b.WriteString("ns1 A 192.0.2.53\nns2 A 192.0.2.54\nmail A 192.0.2.25\n*.wild A 192.0.2.100\n")
	for i := range n {
		h := fmt.Sprintf("host%d", i)
		fmt.Fprintf(&b, "%s A 10.%d.%d.%d\n", h, (i>>16)&255, (i>>8)&255, i&255)
		switch i % 10 {
		case 0, 1, 2:
			fmt.Fprintf(&b, "%s AAAA 2001:db8::%x:%x\n", h, i>>16, i&0xffff) // past 65535, two groups
		case 3:
			fmt.Fprintf(&b, "www%d CNAME %s\n", i, h)
		case 4:
			fmt.Fprintf(&b, "%s TXT \"host %d\"\n", h, i)
		case 5:
			fmt.Fprintf(&b, "%s MX 10 mail\n", h)
		case 6:
			fmt.Fprintf(&b, "leaf.ent%d A 10.200.%d.%d\n", i, (i>>8)&255, i&255)
		case 7:
			fmt.Fprintf(&b, "sub%d NS ns.sub%d\nns.sub%d A 10.201.%d.%d\n", i, i, i, (i>>8)&255, i&255)
		}
	}
	return b.String()
}

// Query is one query of the mix.
type Query struct {
	Name string
	Type string
}

// Queries returns the mix for a zone of n hosts, deterministic and m long.
func Queries(n, m int) []Query {
	qs := make([]Query, 0, m)
	x := uint32(12345)
	for len(qs) < m {
		x = x*1664525 + 1013904223
		i := int(x>>8) % n
		q := func(name, t string) {
			if name == "" {
				qs = append(qs, Query{Origin, t}) // the apex
				return
			}
			qs = append(qs, Query{name + "." + Origin, t})
		}
		switch x % 20 {
		case 0, 1, 2, 3, 4, 5:
			q(fmt.Sprintf("host%d", i), "A")
		case 6, 7:
			q(fmt.Sprintf("host%d", i-i%10), "AAAA")
		case 8:
			q(fmt.Sprintf("www%d", i-i%10+3), "A") // CNAME
		case 9:
			q(fmt.Sprintf("host%d", i-i%10+4), "TXT")
		case 10:
			q(fmt.Sprintf("host%d", i-i%10+5), "MX")
		case 11, 12:
			q(fmt.Sprintf("nx%d", i), "A") // NXDOMAIN
		case 13:
			q(fmt.Sprintf("host%d", i-i%10+9), "AAAA") // NODATA
		case 14:
			q(fmt.Sprintf("x%d.wild", i), "A") // wildcard
		case 15:
			q(fmt.Sprintf("ent%d", i-i%10+6), "A") // empty non-terminal
		case 16:
			q(fmt.Sprintf("www.sub%d", i-i%10+7), "A") // referral
		case 17:
			q("", "SOA")
		case 18:
			q("", "MX")
		case 19:
			q(fmt.Sprintf("host%d", i), "A")
		}
	}
	return qs
}
