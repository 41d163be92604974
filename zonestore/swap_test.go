package zonestore

import (
	"fmt"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/raceflag"
)

func soaRR(origin string, serial uint32) *dns.SOA {
	return &dns.SOA{Hdr: dns.RR_Header{Name: origin, Rrtype: dns.TypeSOA, Class: dns.ClassINET, Ttl: 3600},
		Ns: "ns1." + origin, Mbox: "hostmaster." + origin, Serial: serial, Refresh: 7200, Retry: 3600, Expire: 1209600, Minttl: 300}
}

func txtRR(name string) *dns.TXT {
	return &dns.TXT{Hdr: dns.RR_Header{Name: name, Rrtype: dns.TypeTXT, Class: dns.ClassINET, Ttl: 300}, Txt: []string{"v"}}
}

// versionNames are the names only version v of the swapped zone holds.
func versionNames(v int, origin string) []string {
	out := make([]string, 5)
	for i := range out {
		out[i] = fmt.Sprintf("v%d-%d.changing.%s", v, i, origin)
	}
	return out
}

// TestSwapUnderLoad replaces a 170,000-name zone 1,000 times (50 under the
// race detector) by versions that differ in a few names, while readers query
// names every version holds. Not one answer may be NXDOMAIN, SERVFAIL or
// missing its record, and each answer must come from one version: the names
// of the version a reader loaded are all there, whatever was published since.
func TestSwapUnderLoad(t *testing.T) {
	const origin = "example."
	const hosts = 170000
	swaps := 1000
	if raceflag.Enabled || testing.Short() {
		swaps = 50
	}
	store := NewStore()
	cur := genZone(t, origin, hosts, 1, versionNames(1, origin)...)
	if err := store.Publish(nil, cur, false); err != nil {
		t.Fatal(err)
	}

	var stop atomic.Bool
	var queries, bad atomic.Int64
	var firstErr atomic.Value
	fail := func(format string, args ...any) {
		bad.Add(1)
		firstErr.CompareAndSwap(nil, fmt.Sprintf(format, args...))
	}
	var wg sync.WaitGroup
	for r := range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			x := uint32(r*7919 + 1)
			var last uint32
			for !stop.Load() {
				x = x*1664525 + 1013904223
				i := int(x % hosts)
				name := hostName(i, origin)
				z := store.Find(name)
				if z == nil {
					fail("no zone for %s", name)
					continue
				}
				if int32(z.Serial()-last) < 0 {
					fail("serial went back from %d to %d", last, z.Serial())
				}
				last = z.Serial()
				res := z.Lookup(name, dns.TypeA, false)
				want := net.IPv4(10, byte(i>>16), byte(i>>8), byte(i))
				if res.Rcode != dns.RcodeSuccess || len(res.Answer) != 1 || !res.Answer[0].(*dns.A).A.Equal(want) {
					fail("%s A in serial %d: rcode %s, answer %v", name, z.Serial(), dns.RcodeToString[res.Rcode], res.Answer)
				}
				// The same version still holds its own changing names.
				vn := versionNames(int(z.Serial()), origin)[i%5]
				if res := z.Lookup(vn, dns.TypeTXT, false); res.Rcode != dns.RcodeSuccess || len(res.Answer) != 1 {
					fail("%s TXT in serial %d: rcode %s", vn, z.Serial(), dns.RcodeToString[res.Rcode])
				}
				queries.Add(2)
			}
		}()
	}

	for v := 2; v <= swaps+1; v++ {
		next := nextVersion(t, cur, v, origin)
		if err := store.Publish(cur, next, false); err != nil {
			t.Fatal(err)
		}
		// The replaced version is untouched by the edit.
		if res := cur.Lookup(versionNames(v-1, origin)[0], dns.TypeTXT, false); res.Rcode != dns.RcodeSuccess {
			t.Fatalf("version %d lost its own name after version %d was built", v-1, v)
		}
		if res := next.Lookup(versionNames(v-1, origin)[0], dns.TypeTXT, false); res.Rcode != dns.RcodeNameError {
			t.Fatalf("version %d still holds a name it deleted: %s", v, dns.RcodeToString[res.Rcode])
		}
		cur = next
	}
	stop.Store(true)
	wg.Wait()
	if bad.Load() > 0 {
		t.Fatalf("%d of %d answers wrong during %d swaps; first: %v", bad.Load(), queries.Load(), swaps, firstErr.Load())
	}
	if queries.Load() == 0 {
		t.Fatal("readers answered nothing")
	}
	if got := store.Find(hostName(1, origin)).Serial(); got != uint32(swaps+1) {
		t.Fatalf("serving serial %d, want %d", got, swaps+1)
	}
	t.Logf("%d swaps of a %d-name zone, %d answers, none wrong", swaps, cur.Names(), queries.Load())
}

func must(t testing.TB, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// mustRR is the record s, in a zone file's presentation.
func mustRR(t testing.TB, s string) dns.RR {
	t.Helper()
	r, err := dns.NewRR(s)
	if err != nil {
		t.Fatal(err)
	}
	return r
}
