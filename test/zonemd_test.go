package test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
	"github.com/ontimedns/ontime/zonestore"
)

// zonemdZone is a zone whose digest takes every rule of RFC 8976 to
// match Knot's: names in capitals in owners and in RDATA (lowercased in
// canonical form for some types, not for others), a wildcard, a
// delegation with glue, a DNAME, records of several types at one name and
// of differing TTLs.
func zonemdZone(origin string, serial int) string {
	return fmt.Sprintf(`$ORIGIN %s.
$TTL 300
@ SOA NS1 Hostmaster %d 3600 600 86400 300
@ NS NS1
@ NS ns2.Example.NET.
@ MX 10 Mail
@ TXT "v=spf1 -all"
NS1 A 192.0.2.53
NS1 AAAA 2001:db8::53
Mail 3600 A 192.0.2.25
WWW CNAME Mail
*.Wild TXT "wild" "card"
Sub NS NS.Sub
NS.Sub A 192.0.2.99
Old DNAME New.Example.ORG.
_sip._udp SRV 10 5 5060 Mail
caa CAA 0 issue "ca.example.net"
`, origin, serial)
}

// writeAXFR writes the zone Knot sends by AXFR, its SOA once, as a zone
// file; change, if set, is applied to its text first.
func writeAXFR(t *testing.T, path string, rrs []dns.RR, change func(string) string) {
	t.Helper()
	var b strings.Builder
	for _, rr := range rrs[:len(rrs)-1] { // the closing SOA left out
		b.WriteString(rr.String() + "\n")
	}
	text := b.String()
	if change != nil {
		text = change(text)
	}
	replaceFile(t, path, text)
}

// TestZONEMDFromKnot: with zonemd_verify, a zone's digest (ZONEMD, RFC
// 8976) must verify before it is served. Knot DNS makes the digests, of
// SHA-384 and SHA-512, over a zone unsigned, signed with NSEC and signed
// with NSEC3 (its RRSIG, NSEC and NSEC3 records digested too). ontime, a
// secondary of Knot, verifies all three and serves them; a zone of Knot's
// without a ZONEMD record is transferred and not served. From files: a
// file zone (its names in capitals, as written; Knot's digest is of them
// in lowercase) verifies and is served, and a version
// changed by mistake (one address, with the serial kept) is not published,
// the version before it kept serving; in a directory of copies of Knot's
// AXFR, a copy changed so is not served, and its neighbour is.
func TestZONEMDFromKnot(t *testing.T) {
	knot := startKnotPrimaries(t, []primaryZone{
		{origin: "plain.test", text: zonemdZone("plain.test", 1), conf: "    zonemd-generate: zonemd-sha384\n"},
		{origin: "nsec.test", text: zonemdZone("nsec.test", 1), conf: "    zonemd-generate: zonemd-sha512\n    dnssec-signing: on\n"},
		{origin: "nsec3.test", text: zonemdZone("nsec3.test", 1), conf: "    zonemd-generate: zonemd-sha384\n    dnssec-signing: on\n    dnssec-policy: nsec3\n"},
		{origin: "nodigest.test", text: zonemdZone("nodigest.test", 1)},
	}, nil, "", "whole")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	port := freeport.Get(t)
	var secs strings.Builder
	for _, z := range []string{"plain.test", "nsec.test", "nsec3.test", "nodigest.test"} {
		fmt.Fprintf(&secs, "        secondary %s %s\n", z, knot.addr)
	}
	corefile := fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    prometheus %s\n    transfer {\n        to *\n    }\n    zonestore {\n%s        zonemd_verify\n    }\n}\n", port, prom, secs.String())
	s := startCorefile(t, corefile, port, "plain.test", "nsec.test", "nsec3.test")

	for _, z := range []string{"plain.test.", "nsec.test.", "nsec3.test."} {
		m := new(dns.Msg)
		m.SetQuestion(z, dns.TypeZONEMD)
		m.SetEdns0(4096, true)
		theirs, ours := exchangeBoth(t, knot.addr, s.addr, m, true)
		if got, want := section(ours.Answer), section(theirs.Answer); len(want) == 0 || strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s ZONEMD: ours %v, Knot's %v", z, got, want)
		}
	}
	eventually(t, "the transfer of nodigest.test. to fail", func() bool {
		return metric(t, prom, `coredns_zonestore_transfers_total{result="failed",type="axfr",zone="nodigest.test."}`) >= 1
	})
	if got := answerA(t, s.addr, "ns1.nodigest.test."); got == "192.0.2.53" {
		t.Errorf("nodigest.test., without a ZONEMD record, is served")
	}
	if log := s.log.String(); !strings.Contains(log, `zone "nodigest.test." has no ZONEMD record at its apex`) {
		t.Errorf("no error for nodigest.test. in the log:\n%s", log)
	}

	// From files: plain.test's text as written, in capitals (Knot sends
	// every name in lowercase), with the serial and ZONEMD record Knot
	// gave it; copies of Knot's AXFR in the directory.
	var digest dns.RR
	for _, rr := range axfr(t, knot.addr, "plain.test.") {
		if rr.Header().Rrtype == dns.TypeZONEMD {
			digest = rr
		}
	}
	if digest == nil {
		t.Fatal("Knot's plain.test. has no ZONEMD record")
	}
	dir := t.TempDir()
	plain := filepath.Join(t.TempDir(), "plain.test.zone")
	writePlain := func(text string) { replaceFile(t, plain, text+digest.String()+"\n") }
	writePlain(zonemdZone("plain.test", int(digest.(*dns.ZONEMD).Serial)))
	writeAXFR(t, filepath.Join(dir, "db.nsec.test"), axfr(t, knot.addr, "nsec.test."), nil)
	writeAXFR(t, filepath.Join(dir, "db.nsec3.test"), axfr(t, knot.addr, "nsec3.test."), func(s string) string {
		return strings.Replace(s, "192.0.2.25", "192.0.2.26", 1)
	})
	files := startCoreDNS(t, fmt.Sprintf("    zonestore %s plain.test {\n        reload 100ms\n        reload_by_mtime\n        zonemd_verify\n    }\n    zonestore nsec.test nsec3.test {\n        directory %s\n        zonemd_verify\n    }\n", plain, dir), "plain.test", "nsec.test")
	if got := answerA(t, files.addr, "mail.plain.test."); got != "192.0.2.25" {
		t.Fatalf("mail.plain.test. from the file: %s", got)
	}
	if got := answerA(t, files.addr, "mail.nsec3.test."); got == "192.0.2.26" {
		t.Errorf("nsec3.test., changed after its digest was made, is served from the directory")
	}
	writePlain(strings.Replace(zonemdZone("plain.test", int(digest.(*dns.ZONEMD).Serial)), "192.0.2.25", "192.0.2.26", 1))
	eventually(t, "the changed file's verification to fail", func() bool {
		return strings.Contains(files.log.String(), `zone "plain.test." serial 2 does not verify: the SHA-384 digest is`)
	})
	if got := answerA(t, files.addr, "mail.plain.test."); got != "192.0.2.25" {
		t.Errorf("mail.plain.test. after a version that does not verify: %s, want the version before's 192.0.2.25", got)
	}
	if log := files.log.String(); !strings.Contains(log, `zone "nsec3.test." serial`) || !strings.Contains(log, "does not verify: the SHA-384 digest is") {
		t.Errorf("no error for the directory's changed nsec3.test. in the log:\n%s", log)
	}
}

// TestRandomZONEMDAsKnot: Knot DNS digests zones drawn at random (as
// TestRandomZonesAsKnot draws them: CNAMEs, DNAMEs, delegations with glue
// and DS, wildcards, escaped labels), six unsigned and six signed by
// dnssec-signzone (two each with NSEC, NSEC3 and NSEC3 with opt-out),
// half with SHA-384 and half with SHA-512; each zone as Knot sends it by
// AXFR, read by zonestore, must verify: ontime's digest is Knot's.
func TestRandomZONEMDAsKnot(t *testing.T) {
	const n = 6
	first := randomSeed(t) + 5000
	signer := signerOf(t, "ECDSAP256SHA256")
	dir := t.TempDir()
	var zones []primaryZone
	for i := range uint64(2 * n) {
		seed := first + i
		z := drawZone(t, seed, fmt.Sprintf("d%d.test", seed))
		text := z.Text
		if i >= n {
			b, err := os.ReadFile(signer(dir, z, (i-n)*3/n))
			if err != nil {
				t.Fatal(err)
			}
			text = string(b)
		}
		hash := "zonemd-sha384"
		if i%2 == 1 {
			hash = "zonemd-sha512"
		}
		zones = append(zones, primaryZone{origin: strings.TrimSuffix(z.Origin, "."), text: text, conf: "    zonemd-generate: " + hash + "\n"})
	}
	knot := startKnotPrimaries(t, zones, nil, "", "whole")
	for _, z := range zones {
		rrs := axfr(t, knot.addr, z.origin+".")
		var text strings.Builder
		digests := 0
		for _, rr := range rrs[:len(rrs)-1] {
			text.WriteString(rr.String() + "\n")
			if rr.Header().Rrtype == dns.TypeZONEMD {
				digests++
			}
		}
		if digests != 1 {
			t.Errorf("%s: Knot sent %d ZONEMD records, want 1", z.origin, digests)
			continue
		}
		ours, err := zonestore.Parse(strings.NewReader(text.String()), z.origin, z.origin+".zone")
		if err != nil {
			t.Errorf("%s as Knot sends it: %v", z.origin, err)
			continue
		}
		if err := ours.VerifyZONEMD(); err != nil {
			t.Errorf("%v\nthe zone as Knot sends it:\n%s", err, text.String())
		}
	}
}

// TestKnotVerifiesOntimesZONEMD: with zonemd_generate, ontime makes the
// digest of each version of a file zone (its names in capitals), and Knot
// DNS, its secondary with zonemd-verify, takes the zone and then the next
// version by IXFR, verifying each: Knot refuses a zone whose digest does
// not verify. A signed zone gets no digest of ontime's (it could not sign
// it): logged, and served as it is.
func TestKnotVerifiesOntimesZONEMD(t *testing.T) {
	bin := knotd(t)
	zf := filepath.Join(t.TempDir(), "db.example.org")
	records := []string{"WWW A 192.0.2.1", "Mail A 192.0.2.25", "@ MX 10 Mail", "Alias CNAME WWW"}
	writeZone(t, zf, 1, records...)
	signed := filepath.Join(repoRoot(t), "testdata", "zones", "signed.test.zone")
	port, knotPort := freeport.Get(t), freeport.Get(t)
	s := startCorefile(t, fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    transfer {\n        to 127.0.0.1:%d\n    }\n    zonestore %s example.org {\n        reload 100ms\n        zonemd_generate sha384\n    }\n    zonestore %s signed.test {\n        zonemd_generate\n    }\n}\n", port, knotPort, zf, signed), port, "example.org", "signed.test")

	knot := startKnotFollower(t, bin, knotPort, port, "    zonemd-verify: on\n", "example.org")
	zonemd := func(addr, zone string) []string {
		m := new(dns.Msg)
		m.SetQuestion(zone, dns.TypeZONEMD)
		r, err := exchange(t, addr, m, true)
		if err != nil {
			t.Fatal(err)
		}
		return section(r.Answer)
	}
	if got := answerA(t, knot.addr, "www.example.org."); got != "192.0.2.1" {
		t.Fatalf("Knot after its first transfer: www %s\n%s", got, knot.log.String())
	}
	if ours, theirs := zonemd(s.addr, "example.org."), zonemd(knot.addr, "example.org."); len(ours) != 1 || strings.Join(ours, "") != strings.Join(theirs, "") {
		t.Errorf("ZONEMD: ours %v, Knot's %v", ours, theirs)
	}

	writeZone(t, zf, 2, append([]string{"WWW A 192.0.2.2"}, records[1:]...)...)
	eventually(t, "Knot to follow ontime's new version, verified", func() bool { return answerA(t, knot.addr, "www.example.org.") == "192.0.2.2" })
	if log := knot.log.String(); !strings.Contains(log, "IXFR, incoming") || strings.Count(log, "ZONEMD, verification successful") != 2 {
		t.Errorf("Knot did not take the new version by IXFR, or did not verify both versions' digests:\n%s", log)
	}
	if ours, theirs := zonemd(s.addr, "example.org."), zonemd(knot.addr, "example.org."); len(ours) != 1 || !strings.Contains(ours[0], "zonemd\t2 1 1 ") || strings.Join(ours, "") != strings.Join(theirs, "") {
		t.Errorf("ZONEMD of serial 2: ours %v, Knot's %v", ours, theirs)
	}

	if got := zonemd(s.addr, "signed.test."); len(got) != 0 {
		t.Errorf("signed.test. has a ZONEMD record of ours: %v", got)
	}
	if !strings.Contains(s.log.String(), `Zone "signed.test." serial`) || !strings.Contains(s.log.String(), "is served without a digest of ours") {
		t.Errorf("no error for signed.test.'s digest in the log:\n%s", s.log.String())
	}
}
