package zonestore

import (
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

const head = `$ORIGIN example.org.
$TTL 3600
@ SOA ns1 hostmaster 1 7200 3600 1209600 300
@ NS ns1
ns1 A 192.0.2.53
`

func parse(t testing.TB, text string) (*Zone, error) {
	t.Helper()
	return Parse(strings.NewReader(text), "example.org.", "db.example.org")
}

// TestBuildRefusesInvalidZones: a zone no server may serve is never built,
// and the error names the file, the line where there is one, and the reason.
func TestBuildRefusesInvalidZones(t *testing.T) {
	for _, tc := range []struct {
		name, zone, want string
		line             int
	}{
		{"no SOA", "$ORIGIN example.org.\n@ 3600 NS ns1\nns1 3600 A 192.0.2.1\n", "no SOA record at the apex", 0},
		{"bad TTL", head + "www 3x A 192.0.2.1\n", "3x", 6},
		{"bad address", head + "www A 192.0.2.300\n", "192.0.2.300", 6},
		{"out of zone", head + "www.example.com. A 192.0.2.1\n", `out-of-zone record "www.example.com."`, 6},
		{"CNAME and other data", head + "www A 192.0.2.1\nwww CNAME ns1\n", `"www.example.org." has a CNAME beside A data`, 0},
		{"two CNAMEs", head + "www CNAME ns1\nwww CNAME @\n", "2 CNAME records", 0},
		{"CNAME at apex", head + "@ CNAME ns1\n", "beside", 0},
		{"glue missing", head + "sub NS ns.sub\n", `glue missing: NS "ns.sub.example.org."`, 0},
		{"apex NS without address", head + "@ NS ns2\n", `glue missing: NS "ns2.example.org."`, 0},
		{"CNAME and ALIAS", head + "www ALIAS cdn.example.net.\nwww CNAME ns1\n", `"www.example.org." has a CNAME beside ALIAS data`, 0},
		{"two ALIAS", head + "www ALIAS a.example.net.\nwww ALIAS b.example.net.\n", `"www.example.org." has 2 ALIAS records, want 1`, 0},
		{"two DNAMEs", head + "d DNAME a.example.\nd DNAME b.example.\n", "2 DNAME records", 0},
		{"data below a DNAME", head + "d DNAME a.example.\nx.d A 192.0.2.1\n", `below the DNAME at "d.example.org."`, 0},
		{"data deep below a DNAME", head + "d DNAME a.example.\ny.x.d A 192.0.2.1\n", `below the DNAME at "d.example.org.", which RFC 6672 section 2.3`, 0},
		{"an apex DNAME", head + "@ DNAME a.example.\n", `below the DNAME at "example.org."`, 0},
		{"a DNAME below a delegation", head + "sub NS ns.example.net.\nd.sub DNAME a.example.\nx.d.sub A 192.0.2.1\n", `below the DNAME at "d.sub.example.org."`, 0},
		{"RRSIG without its RRset", head + "www RRSIG A 13 3 3600 20460101000000 20260101000000 1 example.org. AAAA\n", "covers A", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z, err := parse(t, tc.zone)
			if err == nil {
				t.Fatalf("built a zone with %d names, want an error", z.Names())
			}
			if !strings.Contains(err.Error(), tc.want) || !strings.Contains(err.Error(), `"db.example.org"`) {
				t.Fatalf("error %q does not say %q and the file", err, tc.want)
			}
			var ze *Error
			if !errors.As(err, &ze) {
				t.Fatalf("error %T is not a *zonestore.Error", err)
			}
			if tc.line != 0 && ze.Line != tc.line {
				t.Fatalf("error %q at line %d, want line %d", err, ze.Line, tc.line)
			}
		})
	}
}

func TestBuildAcceptsSiblingGlueAndOutOfZoneNS(t *testing.T) {
	_, err := parse(t, head+"a NS ns1\nb NS ns.example.net.\n")
	if err != nil {
		t.Fatal(err)
	}
}

// TestEditKeepsDerivedStateRight edits a zone in ways that move what Build
// precomputes: a delegation over existing names, a removed name that leaves
// an empty non-terminal, a wildcard that comes and goes.
func TestEditKeepsDerivedStateRight(t *testing.T) {
	z, err := parse(t, head+"host.deep.sub A 192.0.2.1\nwww A 192.0.2.2\n")
	if err != nil {
		t.Fatal(err)
	}
	expect := func(z *Zone, name string, qtype uint16, rcode int, aa bool, nAnswer int) {
		t.Helper()
		r := z.Lookup(name, qtype, false)
		if r.Rcode != rcode || r.Authoritative != aa || len(r.Answer) != nAnswer {
			t.Fatalf("serial %d %s %s: rcode %s aa %v answers %d, want %s %v %d", z.Serial(), name, dns.TypeToString[qtype],
				dns.RcodeToString[r.Rcode], r.Authoritative, len(r.Answer), dns.RcodeToString[rcode], aa, nAnswer)
		}
	}
	expect(z, "deep.sub.example.org.", dns.TypeA, dns.RcodeSuccess, true, 0) // empty non-terminal

	rr := func(s string) dns.RR { return mustRR(t, s) }
	step := func(z *Zone, serial uint32, del []string, add []string) *Zone {
		t.Helper()
		b := z.Edit()
		must(t, b.Delete(soaRR("example.org.", z.Serial())))
		must(t, b.Add(soaRR("example.org.", serial), 0))
		for _, s := range del {
			must(t, b.Delete(rr(s)))
		}
		for _, s := range add {
			must(t, b.Add(rr(s), 0))
		}
		next, err := b.Build()
		if err != nil {
			t.Fatal(err)
		}
		return next
	}

	// A delegation above existing names turns them into glue-level data.
	z2 := step(z, 2, nil, []string{"sub.example.org. 3600 NS ns.example.net."})
	expect(z2, "host.deep.sub.example.org.", dns.TypeA, dns.RcodeSuccess, false, 0)
	expect(z, "host.deep.sub.example.org.", dns.TypeA, dns.RcodeSuccess, true, 1) // the old version is unchanged

	// Removing it gives them back; removing the only name below an empty
	// non-terminal removes the non-terminal.
	z3 := step(z2, 3, []string{"sub.example.org. 3600 NS ns.example.net.", "host.deep.sub.example.org. 3600 A 192.0.2.1"}, nil)
	expect(z3, "deep.sub.example.org.", dns.TypeA, dns.RcodeNameError, true, 0)
	expect(z3, "sub.example.org.", dns.TypeA, dns.RcodeNameError, true, 0)

	// A wildcard comes and goes.
	z4 := step(z3, 4, nil, []string{"*.example.org. 300 A 192.0.2.9"})
	expect(z4, "nothere.example.org.", dns.TypeA, dns.RcodeSuccess, true, 1)
	z5 := step(z4, 5, []string{"*.example.org. 300 A 192.0.2.9"}, nil)
	expect(z5, "nothere.example.org.", dns.TypeA, dns.RcodeNameError, true, 0)
	expect(z5, "www.example.org.", dns.TypeA, dns.RcodeSuccess, true, 1)

	// A broken edit is refused and the version it came from still serves.
	b := z5.Edit()
	must(t, b.Add(rr("www.example.org. 300 CNAME ns1.example.org."), 0))
	if _, err := b.Build(); err == nil {
		t.Fatal("an edit that puts a CNAME beside an A built")
	}
	expect(z5, "www.example.org.", dns.TypeA, dns.RcodeSuccess, true, 1)
	// So is one that puts a name below a DNAME, or a DNAME above a name.
	z6 := step(z5, 6, nil, []string{"d.example.org. 300 DNAME example.net.", "q.p.example.org. 300 A 192.0.2.1"})
	for _, add := range []string{"x.d.example.org. 300 A 192.0.2.1", "y.x.d.example.org. 300 TXT below", "p.example.org. 300 DNAME example.net."} {
		b := z6.Edit()
		must(t, b.Add(rr(add), 0))
		if _, err := b.Build(); err == nil || !strings.Contains(err.Error(), "RFC 6672") {
			t.Fatalf("an edit that adds %q: %v, want it refused", add, err)
		}
	}
	expect(z6, "x.d.example.org.", dns.TypeA, dns.RcodeSuccess, true, 2) // the DNAME and its CNAME
	if err := z5.Edit().Delete(rr("nothere.example.org. 300 A 192.0.2.1")); err == nil {
		t.Fatal("deleting a record the zone does not hold succeeded")
	}
}

// TestEditDeletesSignaturesAfterWhatTheyCover: an IXFR of a signed zone
// deletes an RRset's signatures after the RRset, and the old SOA, whose
// signatures go too, opens every difference (RFC 1995). An edit that
// deletes an RRset's last record, or an NSEC3 record, keeps their
// signatures until Build, so that deleting them after still finds them
// (it failed, "the zone does not hold it", and every IXFR of a signed
// zone fell back to AXFR: TestRandomIXFRAsKnot). Signatures of nothing
// left are dropped at Build, and counted out.
func TestEditDeletesSignaturesAfterWhatTheyCover(t *testing.T) {
	const path = "../testdata/zones/nsec3.test.zone"
	z, err := ParseFile(path, "nsec3.test")
	if err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var soa *dns.SOA
	var soaSig, n3Sig *dns.RRSIG
	var n3 *dns.NSEC3
	var apexA *dns.A
	zp := dns.NewZoneParser(f, "nsec3.test.", path)
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		switch r := rr.(type) {
		case *dns.SOA:
			soa = r
		case *dns.A:
			if r.Hdr.Name == "nsec3.test." {
				apexA = r
			}
		case *dns.NSEC3:
			if n3 == nil {
				n3 = r
			}
		case *dns.RRSIG:
			switch {
			case r.TypeCovered == dns.TypeSOA:
				soaSig = r
			case r.TypeCovered == dns.TypeNSEC3 && n3 != nil && r.Hdr.Name == n3.Hdr.Name:
				n3Sig = r
			}
		}
	}
	if soa == nil || soaSig == nil || n3 == nil || n3Sig == nil || apexA == nil {
		t.Fatalf("%s: no SOA, NSEC3 or their signatures, or no A at the apex", path)
	}
	newSOA := dns.Copy(soa).(*dns.SOA)
	newSOA.Serial++
	resign := func(s *dns.RRSIG) *dns.RRSIG {
		c := dns.Copy(s).(*dns.RRSIG)
		c.Inception++
		return c
	}
	newSOASig, newN3Sig := resign(soaSig), resign(n3Sig)
	n3Hash := strings.ToUpper(firstLabelPresentation(n3.Hdr.Name))

	for _, sigsFirst := range []bool{false, true} {
		b := z.Edit()
		deleted := []dns.RR{soa, soaSig, n3, n3Sig}
		if sigsFirst {
			deleted = []dns.RR{soaSig, soa, n3Sig, n3}
		}
		for _, rr := range deleted {
			if err := b.Delete(rr); err != nil {
				t.Fatalf("signatures deleted first %v: %v", sigsFirst, err)
			}
		}
		for _, rr := range []dns.RR{newSOA, newSOASig, n3, newN3Sig} {
			must(t, b.Add(dns.Copy(rr), 0))
		}
		next, err := b.Build()
		if err != nil {
			t.Fatalf("signatures deleted first %v: %v", sigsFirst, err)
		}
		r := next.Lookup("nsec3.test.", dns.TypeSOA, true)
		if len(r.Answer) != 2 || r.Answer[0].(*dns.SOA).Serial != newSOA.Serial || !dns.IsDuplicate(r.Answer[1], newSOASig) {
			t.Errorf("signatures deleted first %v: SOA answer %v, want the new SOA and its one new signature", sigsFirst, r.Answer)
		}
		if n := next.findNSEC3(n3Hash); n == nil || len(n.sigs) != 1 || !dns.IsDuplicate(n.sigs[0], newN3Sig) {
			t.Errorf("signatures deleted first %v: NSEC3 %s holds %v, want its one new signature", sigsFirst, n3Hash, n)
		}
		if next.Records() != z.Records() {
			t.Errorf("signatures deleted first %v: %d records, want %d", sigsFirst, next.Records(), z.Records())
		}
	}

	// An RRset deleted whole whose signature the edit leaves: the
	// signature goes with it, counted out.
	b := z.Edit()
	must(t, b.Delete(apexA))
	next, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if r := next.Lookup("nsec3.test.", dns.TypeRRSIG, true); slices.ContainsFunc(r.Answer, func(rr dns.RR) bool {
		sig, ok := rr.(*dns.RRSIG)
		return ok && sig.TypeCovered == dns.TypeA
	}) {
		t.Errorf("the apex A's signature outlived it: %v", r.Answer)
	}
	if next.Records() != z.Records()-2 {
		t.Errorf("%d records, want %d", next.Records(), z.Records()-2)
	}
	// A signature the zone does not hold still cannot be deleted.
	if err := z.Edit().Delete(newSOASig); err == nil {
		t.Error("deleting a signature the zone does not hold succeeded")
	}
}

// TestRRsetTakesItsLastRecordsTTL: an RRset has one TTL (RFC 2181 section
// 5.2). Records of one set that a file gives differing TTLs all take the
// last one's, as Knot DNS gives them (test/transfer_test.go compares the
// two), a repeated record's too; the version counts and names the sets.
// An edit that adds a record with another TTL retimes its set in the new
// version and leaves the version it was edited from as it was.
func TestRRsetTakesItsLastRecordsTTL(t *testing.T) {
	z, err := parse(t, head+"c 120 TXT x\nc TXT y\nx A 192.0.2.9\nx 60 A 192.0.2.9\ny 60 A 192.0.2.10\ny 90 A 192.0.2.11\ny 30 A 192.0.2.12\nz 300 AAAA 2001:db8::2\nz 300 AAAA 2001:db8::3\n")
	if err != nil {
		t.Fatal(err)
	}
	ttls := func(z *Zone, name string, qtype uint16) (out []uint32) {
		for _, rr := range z.Lookup(name, qtype, false).Answer {
			out = append(out, rr.Header().Ttl)
		}
		return out
	}
	for _, c := range []struct {
		name  string
		qtype uint16
		want  []uint32
	}{
		{"c.example.org.", dns.TypeTXT, []uint32{3600, 3600}},
		{"x.example.org.", dns.TypeA, []uint32{60}},
		{"y.example.org.", dns.TypeA, []uint32{30, 30, 30}},
		{"z.example.org.", dns.TypeAAAA, []uint32{300, 300}},
	} {
		if got := ttls(z, c.name, c.qtype); !slices.Equal(got, c.want) {
			t.Errorf("%s %s: TTLs %v, want %v", c.name, dns.TypeToString[c.qtype], got, c.want)
		}
	}
	if r := z.Retimed(); r == nil || r.Sets != 3 || strings.Join(r.Examples, ",") != "c.example.org. TXT,x.example.org. A,y.example.org. A" {
		t.Errorf("Retimed: %+v, want the 3 sets c TXT, x A and y A", r)
	}

	b := z.Edit()
	rr, _ := dns.NewRR("z.example.org. 60 IN AAAA 2001:db8::4")
	b.Add(rr, 0)
	soa, _ := dns.NewRR("example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. 2 7200 3600 1209600 300")
	old, _ := dns.NewRR("example.org. 3600 IN SOA ns1.example.org. hostmaster.example.org. 1 7200 3600 1209600 300")
	if err := b.Delete(old); err != nil {
		t.Fatal(err)
	}
	b.Add(soa, 0)
	edited, err := b.Build()
	if err != nil {
		t.Fatal(err)
	}
	if got := ttls(edited, "z.example.org.", dns.TypeAAAA); !slices.Equal(got, []uint32{60, 60, 60}) {
		t.Errorf("edited z AAAA: TTLs %v, want all 60", got)
	}
	if got := ttls(z, "z.example.org.", dns.TypeAAAA); !slices.Equal(got, []uint32{300, 300}) {
		t.Errorf("the version edited from: z AAAA TTLs %v, want 300 as before", got)
	}
	if r := edited.Retimed(); r == nil || r.Sets != 1 {
		t.Errorf("edited Retimed: %+v, want the one set z AAAA", r)
	}
}

// TestReparseRetimesAsParse: a file whose RRsets' records have differing
// TTLs, changed and read again, is built as the same file parsed whole
// builds it (each set at its last record's TTL), whether the change is in
// the set (its last record deleted, a record with another TTL put first)
// or elsewhere, read small (records compared) or past textMinBytes (text
// compared). An edit keeps the TTL a set was given, which the file's
// order decides: Reparse builds those versions whole.
func TestReparseRetimesAsParse(t *testing.T) {
	v1 := []string{"y 60 A 192.0.2.10\n", "w A 192.0.2.1\n", "y 90 A 192.0.2.11\n"}
	for _, c := range []struct {
		name string
		v2   []string
	}{
		{"the set's last record deleted", []string{"y 60 A 192.0.2.10\n", "w A 192.0.2.1\n"}},
		{"a record with another TTL put first", []string{"y 30 A 192.0.2.12\n", "y 60 A 192.0.2.10\n", "w A 192.0.2.1\n", "y 90 A 192.0.2.11\n"}},
		{"a record with another TTL put last", []string{"y 60 A 192.0.2.10\n", "w A 192.0.2.1\n", "y 90 A 192.0.2.11\n", "y 30 A 192.0.2.12\n"}},
		{"another name changed", []string{"y 60 A 192.0.2.10\n", "w A 192.0.2.2\n", "y 90 A 192.0.2.11\n"}},
		{"the file mended", []string{"y 90 A 192.0.2.10\n", "w A 192.0.2.1\n", "y 90 A 192.0.2.11\n"}},
	} {
		for _, padded := range []bool{false, true} {
			pad := ""
			if padded {
				pad = strings.Repeat("pad.zz TXT \"padding to keep the text of the file\"\n", 1) +
					strings.Repeat(";"+strings.Repeat(" ", 98)+"\n", textMinBytes/100+1)
				for i := 0; len(pad) < 2*textMinBytes; i++ {
					pad += "pad" + strconv.Itoa(i) + ".zz TXT \"padding\"\n"
				}
			}
			file := func(lines []string) string { return head + strings.Join(lines, "") + pad }
			old, err := parse(t, file(v1))
			if err != nil {
				t.Fatal(err)
			}
			// Twice: the second re-read starts from a version Reparse built.
			for step, lines := range [][]string{c.v2, v1} {
				got, err := old.Reparse(strings.NewReader(file(lines)), "db.example.org")
				if err != nil {
					t.Fatal(err)
				}
				want, err := parse(t, file(lines))
				if err != nil {
					t.Fatal(err)
				}
				g, w := got.Lookup("y.example.org.", dns.TypeA, false).Answer, want.Lookup("y.example.org.", dns.TypeA, false).Answer
				if !slices.Equal(section(g), section(w)) {
					t.Errorf("%s (padded %v, step %d): y A %v, parsed whole %v", c.name, padded, step, g, w)
				}
				old = got
			}
		}
	}
}

// section is rrs as sorted strings, TTLs included.
func section(rrs []dns.RR) []string {
	var out []string
	for _, rr := range rrs {
		out = append(out, rr.String())
	}
	slices.Sort(out)
	return out
}

// TestHasApexNS: a zone says whether its apex has NS records, with few
// names (an array) and with many (an index).
func TestHasApexNS(t *testing.T) {
	noNS := "$ORIGIN example.org.\n@ 3600 SOA ns1 host 1 2 3 4 5\nwww A 192.0.2.1\n"
	var many strings.Builder
	for i := range indexMin {
		fmt.Fprintf(&many, "h%d A 192.0.2.1\n", i)
	}
	for _, tc := range []struct {
		name, zone string
		want       bool
	}{
		{"few names", head, true},
		{"few names, no NS", noNS, false},
		{"many names", head + many.String(), true},
		{"many names, no NS", noNS + many.String(), false},
		{"NS below the apex only", noNS + "sub NS ns.example.net.\n" + many.String(), false},
	} {
		z, err := parse(t, tc.zone)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if got := z.HasApexNS(); got != tc.want {
			t.Errorf("%s: HasApexNS %v, want %v", tc.name, got, tc.want)
		}
	}
}
