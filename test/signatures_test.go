package test

import (
	"crypto"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// signedZone writes zone's file, signed with key: its SOA (of serial), NS,
// the name server's address and DNSKEY, each RRset's signature valid from
// an hour ago to the time valid gives for its type (the default where it
// gives none).
func signedZone(t *testing.T, path, zone string, serial int, key *dns.DNSKEY, signer crypto.Signer, valid map[uint16]time.Time, def time.Time) {
	t.Helper()
	var b strings.Builder
	for _, text := range []string{
		fmt.Sprintf("%s 300 SOA ns1.%s hostmaster.%s %d 7200 3600 1209600 300", zone, zone, zone, serial),
		fmt.Sprintf("%s 300 NS ns1.%s", zone, zone),
		fmt.Sprintf("ns1.%s 300 A 192.0.2.53", zone),
		key.String(),
	} {
		rr, err := dns.NewRR(text)
		if err != nil {
			t.Fatal(err)
		}
		until, ok := valid[rr.Header().Rrtype]
		if !ok {
			until = def
		}
		sig := &dns.RRSIG{Hdr: dns.RR_Header{Ttl: 300}, KeyTag: key.KeyTag(), SignerName: zone, Algorithm: key.Algorithm,
			Inception: uint32(time.Now().Add(-time.Hour).Unix()), Expiration: uint32(until.Unix())}
		if err := sig.Sign(signer, []dns.RR{rr}); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&b, "%s\n%s\n", rr, sig)
	}
	replaceFile(t, path, b.String())
}

// TestSignatureExpiry: each signed zone served exports when its earliest
// signature expires, and the gauge follows a version signed again; a zone
// whose signatures have expired is served, and logged as an error; an
// unsigned zone has no such series.
func TestSignatureExpiry(t *testing.T) {
	dir := t.TempDir()
	key, signer, _ := newKey(t, dir, "sigs.test.")
	staleKey, staleSigner, _ := newKey(t, dir, "stale.test.")
	now := time.Now().Truncate(time.Second)
	month, soon := now.Add(30*24*time.Hour), now.Add(3*24*time.Hour)
	sigs, stale, unsigned := filepath.Join(dir, "sigs.test.zone"), filepath.Join(dir, "stale.test.zone"), filepath.Join(dir, "unsigned.test.zone")
	signedZone(t, sigs, "sigs.test.", 1, key, signer, map[uint16]time.Time{dns.TypeA: soon}, month)
	signedZone(t, stale, "stale.test.", 1, staleKey, staleSigner, nil, now.Add(-24*time.Hour))
	os.WriteFile(unsigned, []byte("$ORIGIN unsigned.test.\n@ 300 SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ 300 NS ns1\nns1 300 A 192.0.2.53\n"), 0o644)
	metrics := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	var body strings.Builder
	fmt.Fprintf(&body, "    prometheus %s\n", metrics)
	for _, z := range []string{sigs, stale, unsigned} {
		fmt.Fprintf(&body, "    zonestore %s %s {\n        reload 100ms\n    }\n", z, strings.TrimSuffix(filepath.Base(z), ".zone"))
	}
	s := startCoreDNS(t, body.String(), "sigs.test", "stale.test", "unsigned.test")

	const gauge = "coredns_zonestore_zone_signatures_expire_timestamp_seconds"
	if got := metric(t, metrics, gauge+`{zone="sigs.test."}`); got != float64(soon.Unix()) {
		t.Errorf("sigs.test.: %s %v, want %d (ns1's A, the earliest)", gauge, got, soon.Unix())
	}
	if got := metric(t, metrics, gauge+`{zone="stale.test."}`); got != float64(now.Add(-24*time.Hour).Unix()) {
		t.Errorf("stale.test.: %s %v, want %d", gauge, got, now.Add(-24*time.Hour).Unix())
	}
	if strings.Contains(string(scrape(t, metrics)), gauge+`{zone="unsigned.test."}`) {
		t.Errorf("unsigned.test. has a series of %s", gauge)
	}
	if log := s.log.String(); !strings.Contains(log, `[ERROR] plugin/zonestore: Zone "stale.test." serial 1: the signature of`) ||
		!strings.Contains(log, "expired at "+now.Add(-24*time.Hour).UTC().Format(time.RFC3339)) || strings.Contains(log, `Zone "sigs.test." serial 1: the signature`) {
		t.Errorf("want an error for stale.test.'s expired signatures, and none for sigs.test.:\n%s", log)
	}
	m := new(dns.Msg)
	m.SetQuestion("ns1.stale.test.", dns.TypeA)
	m.SetEdns0(1232, true)
	if r, err := exchange(t, s.addr, m, false); err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 2 {
		t.Errorf("ns1.stale.test. A with DO: %v %v, want the address and its (expired) signature", err, r)
	}

	signedZone(t, sigs, "sigs.test.", 2, key, signer, nil, month)
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		if metric(t, metrics, gauge+`{zone="sigs.test."}`) == float64(month.Unix()) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("sigs.test. signed again until %d: %s still %v", month.Unix(), gauge, metric(t, metrics, gauge+`{zone="sigs.test."}`))
		}
	}
}
