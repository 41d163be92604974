package zonestore

import (
	"fmt"
	"net/netip"
	"testing"

	"github.com/miekg/dns"
)

// genZone builds a zone of n hosts under origin with the given serial:
// host names h0..h(n-1), each with an A record, spread over 100 subdomains
// so the zone has empty non-terminals, plus extra names given by the caller.
func genZone(tb testing.TB, origin string, n int, serial uint32, extra ...string) *Zone {
	tb.Helper()
	b, err := NewBuilder(origin, "")
	if err != nil {
		tb.Fatal(err)
	}
	add := func(rr dns.RR) {
		if err := b.Add(rr, 0); err != nil {
			tb.Fatal(err)
		}
	}
	add(&dns.SOA{Hdr: dns.RR_Header{Name: origin, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 3600},
		Ns: "ns1." + origin, Mbox: "hostmaster." + origin, Serial: serial, Refresh: 7200, Retry: 3600, Expire: 1209600, Minttl: 300})
	add(&dns.NS{Hdr: dns.RR_Header{Name: origin, Rrtype: dns.TypeNS, Class: dns.ClassINET, Ttl: 3600}, Ns: "ns1." + origin})
	add(&dns.A{Hdr: dns.RR_Header{Name: "ns1." + origin, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 3600}, A: netip.MustParseAddr("192.0.2.53").AsSlice()})
	for i := range n {
		name := fmt.Sprintf("h%d.d%d.%s", i, i%100, origin)
		ip := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		add(&dns.A{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 300}, A: ip.AsSlice()})
	}
	for _, name := range extra {
		add(&dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 300}, Txt: []string{"v"}})
	}
	z, err := b.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return z
}

func hostName(i int, origin string) string { return fmt.Sprintf("h%d.d%d.%s", i, i%100, origin) }

// nextVersion edits cur into version v of the swapped zone: a new SOA serial,
// version v-1's changing names out and version v's in.
func nextVersion(tb testing.TB, cur *Zone, v int, origin string) *Zone {
	tb.Helper()
	b := cur.Edit()
	must(tb, b.Delete(soaRR(origin, uint32(v-1))))
	must(tb, b.Add(soaRR(origin, uint32(v)), 0))
	for _, n := range versionNames(v-1, origin) {
		must(tb, b.Delete(txtRR(n)))
	}
	for _, n := range versionNames(v, origin) {
		must(tb, b.Add(txtRR(n), 0))
	}
	next, err := b.Build()
	if err != nil {
		tb.Fatal(err)
	}
	return next
}
