package zonestore

import (
	"os"
	"strings"
	"testing"
	"unsafe"

	"github.com/miekg/dns"
)

// parsedNSEC3 reads a zone file's NSEC3 records and their signatures as
// miekg/dns parses them, by hash label.
func parsedNSEC3(t *testing.T, path, origin string) (n3 map[string]*dns.NSEC3, sigs map[string][]*dns.RRSIG) {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	n3, sigs = map[string]*dns.NSEC3{}, map[string][]*dns.RRSIG{}
	zp := dns.NewZoneParser(f, origin, path)
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		h := strings.ToUpper(firstLabelPresentation(rr.Header().Name))
		switch r := rr.(type) {
		case *dns.NSEC3:
			n3[h] = r
		case *dns.RRSIG:
			if r.TypeCovered == dns.TypeNSEC3 {
				sigs[h] = append(sigs[h], r)
			}
		}
	}
	if err := zp.Err(); err != nil {
		t.Fatal(err)
	}
	return n3, sigs
}

// within reports whether p points into the size octets from base.
func within(p unsafe.Pointer, base unsafe.Pointer, size uintptr) bool {
	return uintptr(p) >= uintptr(base) && uintptr(p) < uintptr(base)+size
}

// homed reports whether n, its record, its signature and their strings
// are all in one nsec3Home, and its bitmap where it has room for it.
func homed(n *nsec3Node) bool {
	base, size := unsafe.Pointer(n), unsafe.Sizeof(nsec3Home{})
	if len(n.sigs) != 1 {
		return false
	}
	sig := n.sigs[0].(*dns.RRSIG)
	if bits := len(n.rr.TypeBitMap); bits > 0 && bits <= len(nsec3Parts{}.bits) && !within(unsafe.Pointer(&n.rr.TypeBitMap[0]), base, size) {
		return false
	}
	for _, p := range []unsafe.Pointer{
		unsafe.Pointer(n.rr), unsafe.Pointer(sig), unsafe.Pointer(&n.sigs[0]),
		unsafe.Pointer(unsafe.StringData(n.hash)), unsafe.Pointer(unsafe.StringData(n.rr.Hdr.Name)),
		unsafe.Pointer(unsafe.StringData(n.rr.NextDomain)), unsafe.Pointer(unsafe.StringData(sig.Signature)),
		unsafe.Pointer(unsafe.StringData(sig.Hdr.Name)),
	} {
		if !within(p, base, size) {
			return false
		}
	}
	return true
}

// TestNSEC3RecordsAreHomed: every NSEC3 record of a signed zone, with its
// one signature, is served from a home of its own, and is the record the
// file holds.
func TestNSEC3RecordsAreHomed(t *testing.T) {
	const path = "../testdata/zones/nsec3.test.zone"
	z, err := ParseFile(path, "nsec3.test")
	if err != nil {
		t.Fatal(err)
	}
	n3, sigs := parsedNSEC3(t, path, "nsec3.test.")
	if len(z.nsec3) != len(n3) || len(n3) < 10 {
		t.Fatalf("%d NSEC3 records served, %d in the file", len(z.nsec3), len(n3))
	}
	for _, n := range z.nsec3 {
		want := n3[n.hash]
		if want == nil || n.rr.String() != want.String() {
			t.Fatalf("NSEC3 %s serves %v, want %v", n.hash, n.rr, want)
		}
		if len(n.sigs) != 1 || len(sigs[n.hash]) != 1 || n.sigs[0].String() != sigs[n.hash][0].String() {
			t.Fatalf("NSEC3 %s signed by %v, want %v", n.hash, n.sigs, sigs[n.hash])
		}
		if !homed(n) {
			t.Errorf("NSEC3 %s is not in one home", n.hash)
		}
		if unsafe.StringData(n.rr.Salt) != unsafe.StringData(z.n3p.Salt) {
			t.Errorf("NSEC3 %s has a salt of its own, want the zone's", n.hash)
		}
	}
}

// TestEditHomesTheNSEC3ItChanges: a version that changes an NSEC3's
// signature homes the record anew, leaves the version before it serving
// the old signature from its home, and shares every NSEC3 it left alone.
func TestEditHomesTheNSEC3ItChanges(t *testing.T) {
	z, err := ParseFile("../testdata/zones/nsec3.test.zone", "nsec3.test")
	if err != nil {
		t.Fatal(err)
	}
	old := z.nsec3[3]
	oldSig := old.sigs[0].String()
	resigned := dns.Copy(old.sigs[0]).(*dns.RRSIG)
	resigned.Inception++
	b := z.Edit()
	must(t, b.Delete(old.sigs[0]))
	must(t, b.Add(resigned, 0))
	next, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	for i, n := range next.nsec3 {
		switch {
		case i == 3:
			if n == old || !homed(n) || n.sigs[0].String() != resigned.String() || n.rr.String() != old.rr.String() {
				t.Errorf("the changed NSEC3: %v signed by %v (homed %v), want %v signed by %v in a new home", n.rr, n.sigs, homed(n), old.rr, resigned)
			}
		case n != z.nsec3[i]:
			t.Errorf("NSEC3 %s left alone is not the last version's", n.hash)
		}
	}
	if z.nsec3[3] != old || old.sigs[0].String() != oldSig || !homed(old) {
		t.Errorf("the version before serves %v, want %s from its home", old.sigs, oldSig)
	}
}

// TestNSEC3HomeAllocations: a record homed with its signature is one
// allocation; an RSA signature's text, too long for the home, one more;
// a bitmap of more types than the home holds is the record's own. A record
// with two signatures (a key rolling) is left as it is.
func TestNSEC3HomeAllocations(t *testing.T) {
	rr := func(s string) dns.RR { return mustRR(t, s) }
	const owner = "0ICNK1Q8CI5MGDS7GVJV1PP7E7TR9VDN.nsec3.test."
	n3 := rr(owner + " 300 IN NSEC3 1 0 0 - 0P9MHAVEQVM6T7VBL5LOP2U3T2RP3TOM A RRSIG").(*dns.NSEC3)
	wide := rr(owner + " 300 IN NSEC3 1 0 0 - 0P9MHAVEQVM6T7VBL5LOP2U3T2RP3TOM A NS SOA MX TXT AAAA RRSIG DNSKEY NSEC3PARAM CAA").(*dns.NSEC3)
	ecdsa := rr(owner + " 300 IN RRSIG NSEC3 13 3 300 20460101000000 20260101000000 36357 nsec3.test. gTCeooBpax/WyofFWVcGSl076eQqc13WyjPJSrlyOev4UuTf+6MRD6Rq9+xGCm966p4JKujjqAbizIOhC/W6pw==").(*dns.RRSIG)
	rsa := dns.Copy(ecdsa).(*dns.RRSIG)
	rsa.Algorithm = dns.RSASHA256
	rsa.Signature = strings.Repeat("QUJD", 86) // 344 octets of base64: 2048 bits
	const hash = "0ICNK1Q8CI5MGDS7GVJV1PP7E7TR9VDN"

	for _, c := range []struct {
		name   string
		rr     *dns.NSEC3
		sigs   []dns.RR
		allocs float64
		homed  bool
	}{
		{"ECDSA", n3, []dns.RR{ecdsa}, 1, true},
		{"RSA", n3, []dns.RR{rsa}, 2, false},
		{"a wide bitmap", wide, []dns.RR{ecdsa}, 1, true},
		{"two signatures", n3, []dns.RR{ecdsa, rsa}, 0, false},
		{"no signature", n3, nil, 0, false},
	} {
		n := &nsec3Node{hash: hash, rr: c.rr, sigs: c.sigs}
		var h *nsec3Node
		allocs := testing.AllocsPerRun(10, func() { h = homeNSEC3(n, "nsec3.test.", "-") })
		if allocs != c.allocs {
			t.Errorf("%s: %v allocations, want %v", c.name, allocs, c.allocs)
		}
		if c.name == "a wide bitmap" && &h.rr.TypeBitMap[0] != &wide.TypeBitMap[0] {
			t.Errorf("%s: the bitmap copied, want the record's", c.name)
		}
		if homed(h) != c.homed {
			t.Errorf("%s: homed %v, want %v", c.name, homed(h), c.homed)
		}
		if c.allocs == 0 {
			if h != n {
				t.Errorf("%s: a copy, want the node as it was", c.name)
			}
			continue
		}
		if h.hash != hash || h.rr.String() != c.rr.String() || len(h.sigs) != 1 || h.sigs[0].String() != c.sigs[0].String() {
			t.Errorf("%s: %s %v %v, want %s %v %v", c.name, h.hash, h.rr, h.sigs, hash, c.rr, c.sigs)
		}
		if !dns.IsDuplicate(h.rr, c.rr) || !dns.IsDuplicate(h.sigs[0], c.sigs[0]) {
			t.Errorf("%s: the copies are not duplicates of the records", c.name)
		}
	}
}
