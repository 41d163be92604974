package test

import (
	"bytes"
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/conformance"
	"github.com/ontimedns/ontime/internal/freeport"
)

// udpRaw sends m over UDP from its own socket and returns the answer's
// octets as they came.
func udpRaw(t *testing.T, addr string, m *dns.Msg) []byte {
	t.Helper()
	out, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	b, err := askRaw(addr, out, false)
	if err != nil {
		t.Fatalf("%v: %v", m.Question, err)
	}
	return b
}

// A question asked again, the same way, from the same version of the
// zone, is answered with the octets packed for it the first time, but
// its own ID; the metrics count it as they counted the first; a question
// asked another way (the EDNS size, DO) is another answer, and in
// another case the same answer with its question spelled as asked
// (TestReplayAnswersEverySpelling); a new version of the zone is never
// answered from the old.
func TestReplayAnswersAsPacked(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	records := []string{"www A 192.0.2.1", "www AAAA 2001:db8::1", "@ MX 10 mail", "mail A 192.0.2.25",
		"alias CNAME www", "*.wild TXT \"wild\"", "sub NS ns.sub", "ns.sub A 192.0.2.99", "a.b.c TXT \"deep\""}
	writeZone(t, zf, 1, records...)
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	// One P: each P keeps answers of its own, and a second query must
	// meet the first's.
	s := startCoreDNSWith(t, onePAnswer, fmt.Sprintf("    prometheus %s\n    codel\n    fastpack\n    zonestore %s example.org {\n        reload 100ms\n    }", prom, zf), "example.org")
	hits := func() float64 { return metric(t, prom, "coredns_zonestore_replay_hits_total") }
	misses := func() float64 { return metric(t, prom, "coredns_zonestore_replay_misses_total") }
	sizes := fmt.Sprintf(`coredns_dns_response_size_bytes_sum{proto="udp",server="dns://%s",view="",zone="."}`, s.addr)
	nx := fmt.Sprintf(`coredns_dns_responses_total{plugin="zonestore",rcode="NXDOMAIN",server="dns://%s",view="",zone="."}`, s.addr)

	type ask struct {
		name  string
		qtype uint16
		edns  uint16 // 0: no OPT
		do    bool
	}
	asks := []ask{
		{"www.example.org.", dns.TypeA, 0, false},
		{"WwW.example.org.", dns.TypeA, 0, false},
		{"www.example.org.", dns.TypeA, 1232, false},
		{"www.example.org.", dns.TypeA, 4096, true},
		{"www.example.org.", dns.TypeAAAA, 1232, false},
		{"alias.example.org.", dns.TypeA, 1232, false},
		{"x.wild.example.org.", dns.TypeTXT, 1232, false},
		{"host.sub.example.org.", dns.TypeA, 1232, false},
		{"nx.example.org.", dns.TypeA, 1232, false},
		{"b.c.example.org.", dns.TypeTXT, 0, false},
		{"example.org.", dns.TypeMX, 512, false},
	}
	msg := func(a ask, id uint16) *dns.Msg {
		m := new(dns.Msg)
		m.SetQuestion(a.name, a.qtype)
		m.Id = id
		if a.edns != 0 {
			m.SetEdns0(a.edns, a.do)
		}
		return m
	}
	pass := func(id uint16) (answers [][]byte, sizeSum, nxs float64) {
		s0, n0 := metric(t, prom, sizes), metric(t, prom, nx)
		for _, a := range asks {
			answers = append(answers, udpRaw(t, s.addr, msg(a, id)))
		}
		return answers, metric(t, prom, sizes) - s0, metric(t, prom, nx) - n0
	}

	// A question is kept at its second miss (replay/admit.go): none of
	// these is kept but www's A, asked four ways, from its second.
	h0, m0 := hits(), misses()
	pass(0)
	if h, m := hits()-h0, misses()-m0; h != 0 || m != float64(len(asks)) {
		t.Fatalf("questions asked once: %g hits, %g misses; want 0 and %d", h, m, len(asks))
	}
	h0, m0 = hits(), misses()
	first, firstSizes, firstNX := pass(1)
	// www's A is found for its four ways now: WwW's answer kept, and
	// found for www with its question spelled as asked, and those with
	// each EDNS record.
	if h, m := hits()-h0, misses()-m0; h != 4 || m != float64(len(asks)-4) {
		t.Fatalf("first pass: %g hits, %g misses; want 4 (www's A) and %d (each a question of its own)", h, m, len(asks)-4)
	}
	second, secondSizes, secondNX := pass(2)
	if h := hits() - h0; h != float64(len(asks)+4) {
		t.Fatalf("second pass: %g hits, want %d (and the first pass's)", h, len(asks)+4)
	}
	for i := range asks {
		a, b := first[i], second[i]
		if a[0] != 0 || a[1] != 1 || b[0] != 0 || b[1] != 2 {
			t.Errorf("%v: IDs % x and % x, want 00 01 and 00 02", asks[i], a[:2], b[:2])
		}
		if !bytes.Equal(a[2:], b[2:]) {
			t.Errorf("%v: the second answer differs:\n% x\n% x", asks[i], a, b)
		}
		var m dns.Msg
		if err := m.Unpack(b); err != nil || m.Question[0].Name != asks[i].name {
			t.Errorf("%v: %v, question %v", asks[i], err, m.Question)
		}
	}
	if firstSizes != secondSizes || firstNX != secondNX || firstNX != 1 {
		t.Errorf("metrics: response sizes %g then %g, NXDOMAIN %g then %g; want the same, one NXDOMAIN", firstSizes, secondSizes, firstNX, secondNX)
	}

	// A new version of the zone: www's new address at once, never the old.
	records[0] = "www A 192.0.2.2"
	writeZone(t, zf, 2, records...)
	deadline := time.Now().Add(5 * time.Second)
	for {
		var m dns.Msg
		if err := m.Unpack(udpRaw(t, s.addr, msg(asks[0], 3))); err != nil || len(m.Answer) != 1 {
			t.Fatalf("after the reload: %v %v", err, m.Answer)
		}
		if m.Answer[0].(*dns.A).A.String() == "192.0.2.2" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the new version was not served")
		}
		time.Sleep(50 * time.Millisecond)
	}
	for i := 0; i < 20; i++ {
		var m dns.Msg
		if err := m.Unpack(udpRaw(t, s.addr, msg(asks[0], 4))); err != nil || m.Answer[0].(*dns.A).A.String() != "192.0.2.2" {
			t.Fatalf("after the new version was served: %v %v", err, m.Answer)
		}
	}

	// A client subnet may be answered per client: no key, neither a hit
	// nor a miss.
	h1, m1 := hits(), misses()
	c := msg(asks[2], 5)
	c.IsEdns0().Option = append(c.IsEdns0().Option, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 24, Address: net.IPv4(192, 0, 2, 0)})
	for i := 0; i < 3; i++ {
		udpRaw(t, s.addr, c)
	}
	if hits() != h1 || misses() != m1 {
		t.Errorf("queries with a client subnet: %g hits, %g misses, want none", hits()-h1, misses()-m1)
	}

	// A cookie is answered by no plugin here (nor by Knot without its
	// cookies module): a query with one has the key of the same query
	// without. Asked first with a cookie, the question is looked up and
	// kept; asked without, it is a hit, the same octets.
	fresh := ask{"www.example.org.", dns.TypeAAAA, 4096, false}
	h2, m2 := hits(), misses()
	k := msg(fresh, 6)
	k.IsEdns0().Option = append(k.IsEdns0().Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"})
	looked := udpRaw(t, s.addr, k)
	replayed := udpRaw(t, s.addr, msg(fresh, 6))
	if h, m := hits()-h2, misses()-m2; h != 1 || m != 1 {
		t.Errorf("a question asked with a cookie, then without: %g hits, %g misses, want one of each", h, m)
	}
	if !bytes.Equal(looked, replayed) {
		t.Errorf("the answer to the question with a cookie\n% x\nand without it, replayed\n% x\ndiffer", looked, replayed)
	}

	// CD, which every answer clears (RFC 4035 section 3.1.6), is no part
	// of the key: a validating resolver's query, CD set, is that answer.
	h3 := hits()
	withCD := msg(fresh, 6)
	withCD.CheckingDisabled = true
	if got := udpRaw(t, s.addr, withCD); hits()-h3 != 1 || !bytes.Equal(got, replayed) {
		t.Errorf("the question asked with CD: %g hits, want 1; answer\n% x\nwant\n% x", hits()-h3, got, replayed)
	}
}

// replay 0 keeps no answer, and neither does a chain whose writers down
// to the packer cannot write a kept answer (here no fastpack at all):
// every query is looked up and packed, and counted neither a hit nor a
// miss.
func TestReplayKeepsNoneWhereItCannot(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	for name, chain := range map[string]string{
		"replay 0":    "    codel\n    fastpack\n    zonestore %s example.org {\n        replay 0\n    }",
		"no fastpack": "    codel\n    zonestore %s example.org",
	} {
		prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
		s := startCoreDNSWith(t, onePAnswer, fmt.Sprintf("    prometheus %s\n", prom)+fmt.Sprintf(chain, zf), "example.org")
		for i := 0; i < 5; i++ {
			m := new(dns.Msg)
			m.SetQuestion("www.example.org.", dns.TypeA)
			var in dns.Msg
			if err := in.Unpack(udpRaw(t, s.addr, m)); err != nil || len(in.Answer) != 1 {
				t.Fatalf("%s: %v %v", name, err, in.Answer)
			}
		}
		if h, m := metric(t, prom, "coredns_zonestore_replay_hits_total"), metric(t, prom, "coredns_zonestore_replay_misses_total"); h != 0 || m != 0 {
			t.Errorf("%s: %g hits, %g misses, want none", name, h, m)
		}
	}
}

// Over TCP an answer is kept apart from UDP's (a key says whether its
// request came over a stream), and replayed: a UDP answer kept may be
// truncated to the request's size, and a TCP answer never is. A question
// whose answer is too long for 512 octets is asked, without EDNS, over
// UDP (truncated each time, replayed), then over TCP (whole each time,
// replayed from the second), then over UDP again (still truncated). With
// prometheus in the chain and without it (fastpack's writer alone
// decides).
func TestReplayKeepsStreamsApart(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	txt := "big TXT"
	for i := 0; i < 6; i++ {
		txt += fmt.Sprintf(" \"%0100d\"", i)
	}
	writeZone(t, zf, 1, txt)
	for _, withMetrics := range []bool{true, false} {
		prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
		metrics := ""
		if withMetrics {
			metrics = "    prometheus " + prom + "\n"
		}
		s := startCoreDNSWith(t, onePAnswer, metrics+fmt.Sprintf("    codel\n    fastpack\n    zonestore %s example.org", zf), "example.org")
		hits := func() float64 {
			if !withMetrics {
				return 0
			}
			return metric(t, prom, "coredns_zonestore_replay_hits_total")
		}
		m := new(dns.Msg)
		m.SetQuestion("big.example.org.", dns.TypeTXT)
		overUDP := func(when string) {
			for i := 0; i < 3; i++ {
				var in dns.Msg
				if err := in.Unpack(udpRaw(t, s.addr, m)); err != nil || !in.Truncated {
					t.Fatalf("over UDP %s: %v, truncated %v; want truncated", when, err, in.Truncated)
				}
			}
		}
		overUDP("first")
		h0 := hits()
		// A connection each: an answer leaves only once its query has
		// been served, and kept (codel's listener holds it until the
		// server's loop reads again), so the next query finds it on any
		// connection. Before, one written before it was kept missed
		// about one run in 60.
		tc := &dns.Client{Net: "tcp", Timeout: 2 * time.Second}
		for i := 0; i < 3; i++ {
			in, _, err := tc.Exchange(m, s.addr)
			if err != nil || in.Truncated || len(in.Answer) != 1 {
				t.Fatalf("over TCP, query %d: %v, truncated %v, %d answers; want the whole answer", i, err, in.Truncated, len(in.Answer))
			}
		}
		// The first is looked up and kept at once (the question's UDP
		// answer is kept: asked another way, replay/admit.go); the two
		// after it are replayed.
		if h := hits() - h0; withMetrics && h != 2 {
			t.Errorf("%g hits for three TCP queries, want 2", h)
		}
		overUDP("after TCP")
	}
}

// TestReplayIsRateLimited: with rrl in the chain, answers are replayed
// and limited as they were before there was replay. A flood of one name
// from one network is held to the rate, every second limited answer sent
// truncated and the rest dropped, counted in codel's drops and rrl's
// metric; answers were replayed. NXDOMAIN answers kept for ten names
// (asked from an exempt network, so kept whole) are limited as one when
// written again to a flooding network: the subject kept with each is the
// zone's, not the name's; and two names with answers are limited apart,
// whether their answers were kept for a limited client or an exempt one.
func TestReplayIsRateLimited(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1", "a A 192.0.2.3", "b A 192.0.2.4")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNSWith(t, onePAnswer, fmt.Sprintf("    prometheus %s\n    codel\n    rrl {\n        rate 10\n        exempt 127.0.9.0/24\n    }\n    fastpack\n    zonestore %s example.org", prom, zf), "example.org")
	server := "dns://" + s.addr
	hits := func() float64 { return metric(t, prom, "coredns_zonestore_replay_hits_total") }
	drops := func() float64 {
		return metric(t, prom, `coredns_codel_drops_total{reason="ratelimit",server="`+server+`"}`)
	}

	full, tc := burst(t, "127.0.5.1", s.addr, repeat("www.example.org.", 100), dns.TypeA)
	t.Logf("one network, 100 queries for one name: %d answered, %d truncated, %g replayed", full, tc, hits())
	if hits() < float64(full-1) {
		t.Errorf("%g answers replayed, want the full answers but the first (%d)", hits(), full-1)
	}
	if full < 10 || full > 15 {
		t.Errorf("%d full answers at rate 10, want about 10", full)
	}
	if dropped := 100 - full - tc; tc < dropped-2 || tc > dropped+2 {
		t.Errorf("%d truncated and %d dropped: slip 2 truncates every second limited answer", tc, dropped)
	}
	if got := drops(); got != float64(100-full-tc) {
		t.Errorf("codel counted %v rate-limited drops, want %d", got, 100-full-tc)
	}
	if got := metric(t, prom, `coredns_rrl_limited_total{action="slip",server="`+server+`"}`); got != float64(tc) {
		t.Errorf("coredns_rrl_limited_total{action=slip} = %v, want %d", got, tc)
	}

	var ten []string
	for i := range 10 {
		ten = append(ten, fmt.Sprintf("r%d.example.org.", i))
	}
	if full, _ := burst(t, "127.0.9.1", s.addr, ten, dns.TypeA); full != 10 {
		t.Fatalf("exempt network: %d of 10 answered", full)
	}
	before := hits()
	var flood []string
	for range 10 {
		flood = append(flood, ten...)
	}
	full, tc = burst(t, "127.0.7.1", s.addr, flood, dns.TypeA)
	t.Logf("another network, 10 names' NXDOMAIN 10 times each: %d answered, %d truncated, %g replayed", full, tc, hits()-before)
	if hits()-before < float64(full) {
		t.Errorf("%g of the NXDOMAIN answers replayed, want every full one (%d)", hits()-before, full)
	}
	if full > 15 || tc == 0 {
		t.Errorf("%d answered in full, %d truncated; want the ten names limited as their zone", full, tc)
	}

	// Two names with answers are limited apart: 50 queries for each,
	// interleaved, from a fourth network, 10 or so of each answered.
	var two []string
	for range 50 {
		two = append(two, "www.example.org.", "ns1.example.org.")
	}
	before = hits()
	full, _ = burst(t, "127.0.8.1", s.addr, two, dns.TypeA)
	t.Logf("a fourth network, two names 50 times each: %d answered, %g replayed", full, hits()-before)
	if full < 20 || full > 30 {
		t.Errorf("%d of two names' answers answered in full, want about 10 of each", full)
	}

	// Two more, their answers kept for an exempt network, then written
	// again to a flooding one: limited apart too.
	if full, _ := burst(t, "127.0.9.1", s.addr, []string{"a.example.org.", "b.example.org."}, dns.TypeA); full != 2 {
		t.Fatalf("exempt network: %d of 2 answered", full)
	}
	two = two[:0]
	for range 50 {
		two = append(two, "a.example.org.", "b.example.org.")
	}
	before = hits()
	full, _ = burst(t, "127.0.10.1", s.addr, two, dns.TypeA)
	t.Logf("a fifth network, two names kept for the exempt one, 50 times each: %d answered, %g replayed", full, hits()-before)
	if full < 20 || full > 30 || hits()-before < float64(full-2) {
		t.Errorf("%d of the two names' answers answered in full (%g replayed), want about 10 of each, replayed", full, hits()-before)
	}
}

// With the stock errors plugin in the chain, as in Corefile.example and
// the Kubernetes example, answers are replayed, and an error from the
// plugins below is logged as the stock plugin logs it, over UDP (errors'
// stand-in, plugin/stockerrors) and TCP (the stock handler). The stock
// handler wraps the writer for every query, and no answer was kept.
func TestReplayBesideTheErrorsPlugin(t *testing.T) {
	// fallthrough with no plugin after: a name the zone lacks is an error.
	s := replayedFiveTimes(t, "    errors\n    prometheus %s\n    codel\n    fastpack\n    zonestore %s example.org {\n        fallthrough\n    }")
	for _, tcp := range []bool{false, true} {
		name := fmt.Sprintf("nx-tcp-%v.example.org.", tcp)
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		in, err := exchange(t, s.addr, m, tcp)
		if err != nil || in.Rcode != dns.RcodeServerFailure {
			t.Fatalf("%s: %v %v, want SERVFAIL", name, err, in)
		}
		want := fmt.Sprintf("[ERROR] plugin/errors: 2 %s A: plugin/zonestore: no next plugin found", name)
		eventually(t, "the error logged", func() bool { return strings.Contains(s.log.String(), want) })
	}
}

// errors with consolidate keeps the stock handler, which counts the errors
// a pattern matches and logs them together later, not one by one.
func TestTheErrorsPluginStillConsolidates(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	s := startCoreDNSWith(t, onePAnswer, fmt.Sprintf("    errors {\n        consolidate 5m \".*\"\n    }\n    codel\n    fastpack\n    zonestore %s example.org {\n        fallthrough\n    }", zf), "example.org")
	for i := range 3 {
		m := new(dns.Msg)
		m.SetQuestion(fmt.Sprintf("nx%d.example.org.", i), dns.TypeA)
		if in, err := exchange(t, s.addr, m, false); err != nil || in.Rcode != dns.RcodeServerFailure {
			t.Fatalf("%v %v, want SERVFAIL", err, in)
		}
	}
	time.Sleep(200 * time.Millisecond)
	if strings.Contains(s.log.String(), "no next plugin found") {
		t.Fatalf("an error logged one by one where consolidate counts them:\n%s", s.log.String())
	}
}

// Stock plugins that only pass a query on (here bufsize and any) call the
// next plugin through CoreDNS's NextOrFailure, which wraps the writer at
// every hop; the writers look through that wrapper (chain.ReplayWriter),
// and the answers are replayed. They were not: one such plugin in a chain
// kept every answer from being kept.
func TestReplayThroughPluginsThatPassQueriesOn(t *testing.T) {
	s := replayedFiveTimes(t, "    bufsize 1232\n    any\n    prometheus %s\n    codel\n    fastpack\n    zonestore %s example.org")
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeANY)
	var in dns.Msg
	if err := in.Unpack(udpRaw(t, s.addr, m)); err != nil || len(in.Answer) != 1 || in.Answer[0].Header().Rrtype != dns.TypeHINFO {
		t.Fatalf("ANY: %v %v, want any's HINFO", err, in.Answer)
	}
}

// replayedFiveTimes starts a server of chain (its metrics address and its
// zone file's path go in for its two %s) for example.org, asks it for
// www.example.org five times over UDP, and requires each answer, with the
// query's ID, and three hits or more (a question is kept at its second
// miss: replay/admit.go).
func replayedFiveTimes(t *testing.T, chain string) *server {
	t.Helper()
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNSWith(t, onePAnswer, fmt.Sprintf(chain, prom, zf), "example.org")
	for i := 0; i < 5; i++ {
		m := new(dns.Msg)
		m.SetQuestion("www.example.org.", dns.TypeA)
		var in dns.Msg
		if err := in.Unpack(udpRaw(t, s.addr, m)); err != nil || len(in.Answer) != 1 || in.Id != m.Id {
			t.Fatalf("%v %v", err, in.Answer)
		}
	}
	if h := metric(t, prom, "coredns_zonestore_replay_hits_total"); h < 3 {
		t.Errorf("%g hits of 5 queries, want 3 or more", h)
	}
	return s
}

// swapCase is name with the case of each letter turned over: the same
// name, spelled otherwise wherever it has a letter.
func swapCase(name string) string {
	b := []byte(name)
	for i, c := range b {
		if 'a' <= c|0x20 && c|0x20 <= 'z' {
			b[i] = c ^ 0x20
		}
	}
	return string(b)
}

// An answer kept for a question is the answer to it asked in any case,
// octet for octet but the question's spelling, wherever the answer holds
// that spelling nowhere else: every query of the conformance corpus over
// UDP (signed zones with NSEC and NSEC3, wildcards, delegations, CNAME
// chains, DNAMEs), asked first in the other case, is then answered in
// its own case and in a third with the octets a server that keeps no
// answers packs for it. Each such answer is a hit, but where its answer
// holds a DNAME's CNAME (the question's labels over the DNAME's target,
// in the case asked), is longer than replay keeps, or its name has an
// escape: those are looked up.
func TestReplayAnswersEverySpelling(t *testing.T) {
	zones := conformanceZones(t)
	kept, origins := zonestoreLines(zones, "")
	none, _ := zonestoreLines(zones, " {\n        replay 0\n    }")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	full := startCoreDNSWith(t, onePAnswer, "    prometheus "+prom+"\n    codel\n    fastpack\n"+kept, origins...)
	ref := startCoreDNS(t, "    codel\n    fastpack\n"+none, origins...)
	hits := func() float64 { return metric(t, prom, "coredns_zonestore_replay_hits_total") }

	asked, want, dnames := 0, 0, 0
	var hit float64 // of the spellings compared
	for _, q := range conformance.Corpus(origins) {
		if q.TCP {
			continue
		}
		m := q.Msg()
		other := swapCase(m.Question[0].Name)
		if other == m.Question[0].Name {
			continue
		}
		m.Question[0].Name = other
		udpRaw(t, full.addr, m) // missed once
		udpRaw(t, full.addr, m) // and again: kept (replay/admit.go)
		h0 := hits()
		for _, name := range []string{q.Name, mixCase(q.Name, asked)} {
			m.Question[0].Name = name
			got, exp := udpRaw(t, full.addr, m), udpRaw(t, ref.addr, m)
			if !bytes.Equal(got[2:], exp[2:]) {
				t.Errorf("%s asked as %s: replayed\n% x\nwhere it is packed\n% x", q, name, got, exp)
			}
			asked++
			var a dns.Msg
			if err := a.Unpack(exp); err != nil {
				t.Fatal(err)
			}
			switch {
			case synthesizes(a.Answer):
				dnames++
			case a.Rcode != dns.RcodeRefused && len(exp) <= 1232 && !strings.Contains(a.Question[0].Name, `\`):
				want++ // ours (not a name out of the zones), short, with no escape as it came
			}
		}
		hit += hits() - h0
	}
	if dnames == 0 || want < asked/2 {
		t.Fatalf("%d answers asked again, %d of them with a DNAME, %d to replay: the corpus should have both", asked, dnames, want)
	}
	if hit != float64(want) {
		t.Errorf("%g hits for %d answers asked in another case that may be replayed", hit, want)
	}
}

// mixCase is name with its letters' case drawn from the bits of seed, in
// turn: a spelling of its own for each seed.
func mixCase(name string, seed int) string {
	b := []byte(name)
	bit := 0
	for i, c := range b {
		if 'a' <= c|0x20 && c|0x20 <= 'z' {
			b[i] = c&^0x20 | byte(seed>>(bit%20)&1)<<5
			bit++
		}
	}
	return string(b)
}

// synthesizes reports whether an answer holds a CNAME a DNAME of it made:
// one whose owner is below the DNAME's.
func synthesizes(answer []dns.RR) bool {
	for _, d := range answer {
		for _, c := range answer {
			if d.Header().Rrtype == dns.TypeDNAME && c.Header().Rrtype == dns.TypeCNAME &&
				dns.IsSubDomain(d.Header().Name, c.Header().Name) && !strings.EqualFold(d.Header().Name, c.Header().Name) {
				return true
			}
		}
	}
	return false
}
