package main

import (
	"net"
	"os"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// TestBatchedLoopAccountsForEveryQuery runs the batched closed loop against
// a server on loopback that answers 49 queries in 50 and drops the
// fiftieth, past the point where the loop's IDs wrap round: every query sent
// must be one the server read, every answer the server sent counted once,
// and what went unanswered exactly what it dropped. A loop that lost track
// of a dropped query's place (the window shrinking) or counted an answer
// to a reused ID twice would not balance.
func TestBatchedLoopAccountsForEveryQuery(t *testing.T) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	srv.SetReadBuffer(4 << 20)
	var read, answered, dropped atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 4096)
		for {
			n, from, err := srv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if read.Add(1)%50 == 0 {
				dropped.Add(1)
				continue
			}
			buf[2] |= 0x80 // QR: an answer, the question echoed
			if _, err := srv.WriteToUDP(buf[:n], from); err == nil {
				answered.Add(1)
			}
		}
	}()

	qs := queriesOf(t, "www.example.org. A\nexample.org. MX\nx._rand_.example.org. AAAA do\n")
	// A window of 32 stays inside a socket's default receive buffer (212,992
	// octets: about 2 KiB of kernel memory a datagram), so that the kernel
	// drops nothing even when the server goroutine waits for a CPU.
	const maxQ = 70_000 // past 65,536: the single socket's IDs wrap
	var hist histogram
	r, err := runBatched(srv.LocalAddr().(*net.UDPAddr), qs, 32, 8, 1, maxQ, 20*time.Second, 20*time.Millisecond, 100*time.Millisecond, &hist)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	<-done
	if r.Sent < 65_536 {
		t.Fatalf("sent %d queries, want the IDs to wrap (more than 65,536)", r.Sent)
	}
	if r.Sent != read.Load() {
		t.Errorf("sent %d, the server read %d", r.Sent, read.Load())
	}
	if r.Answered != answered.Load() {
		t.Errorf("counted %d answers, the server sent %d", r.Answered, answered.Load())
	}
	if r.Unanswered != dropped.Load() {
		t.Errorf("%d unanswered, the server dropped %d", r.Unanswered, dropped.Load())
	}
	// An echoed query is NOERROR with no answer records: NODATA.
	if r.NoData != r.Answered || r.NXDomain+r.ServFail+r.Refused != 0 {
		t.Errorf("answers by kind: %+v, want every one NODATA", r)
	}
}

// TestARunLastsWhileItSends: a run of the batched loop against a server
// that drops one query in 50 lasts, for the rate it reports, while the
// loop sent and its answers came, not also the wait each loop's drain
// spends on its lost queries before giving them up (2 s here, against a
// 300 ms run): a server that loses a query in a run is measured over the
// same time as one that loses none.
func TestARunLastsWhileItSends(t *testing.T) {
	srv, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Close()
	go func() {
		buf := make([]byte, 4096)
		for read := 1; ; read++ {
			n, from, err := srv.ReadFromUDP(buf)
			if err != nil {
				return
			}
			if read%50 == 0 {
				continue
			}
			buf[2] |= 0x80
			srv.WriteToUDP(buf[:n], from)
		}
	}()
	qs := queriesOf(t, "www.example.org. A\n")
	const run, wait = 300 * time.Millisecond, 2 * time.Second
	var hist histogram
	r, err := runBatched(srv.LocalAddr().(*net.UDPAddr), qs, 32, 8, 2, 1_000_000_000, run, wait, 100*time.Millisecond, &hist)
	if err != nil {
		t.Fatal(err)
	}
	if r.Unanswered == 0 {
		t.Fatalf("%+v: want queries lost, so that the drains wait", r)
	}
	if r.Seconds < run.Seconds() || r.Seconds >= wait.Seconds() {
		t.Fatalf("the run lasted %.3f s for its rate, want from %v to well under the drain's %v", r.Seconds, run, wait)
	}
}

// queriesOf loads the queries of a query file with text, as -queries does.
func queriesOf(t *testing.T, text string) []query {
	t.Helper()
	file := t.TempDir() + "/queries.txt"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	qs, err := load(file, 0, false, false)
	if err != nil {
		t.Fatal(err)
	}
	return qs
}

// TestPacketNumbersRandLabels: a _rand_ label becomes six hex digits of
// the query's number, so that queries numbered apart ask names apart, and
// the ID is the one given; a name without one goes out as read.
func TestPacketNumbersRandLabels(t *testing.T) {
	qs := queriesOf(t, "x._rand_.example.org. A\nwww.example.org. A\n")
	names := map[string]bool{}
	for n := range 3 {
		m := new(dns.Msg)
		if err := m.Unpack(qs[0].packet([]byte("prefix"), 0x12345+n, uint16(n+7))[len("prefix"):]); err != nil {
			t.Fatal(err)
		}
		if m.Id != uint16(n+7) {
			t.Errorf("ID %d, want %d", m.Id, n+7)
		}
		names[m.Question[0].Name] = true
	}
	if !names["x.012345.example.org."] || len(names) != 3 {
		t.Errorf("names %v, want x.012345.example.org. and two more, all apart", names)
	}
	m := new(dns.Msg)
	if err := m.Unpack(qs[1].packet(nil, 99, 1)); err != nil || m.Question[0].Name != "www.example.org." {
		t.Errorf("a name without _rand_: %v, %v", m, err)
	}
}

// TestMixCaseDrawsACaseEachSend: with -caps each send's name is the
// file's name in a case of its own, letters alone changed; the rest of
// the query is left as it is.
func TestMixCaseDrawsACaseEachSend(t *testing.T) {
	m := new(dns.Msg)
	m.SetQuestion("www-1.Example.org.", dns.TypeA)
	wire, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	q := query{wire: wire, rand: -1, caps: true}
	seen := map[string]bool{}
	for n := range 64 {
		var got dns.Msg
		if err := got.Unpack(q.packet(nil, n, 1)); err != nil {
			t.Fatal(err)
		}
		name := got.Question[0].Name
		if !strings.EqualFold(name, "www-1.example.org.") || got.Question[0].Qtype != dns.TypeA {
			t.Fatalf("send %d: %s %d", n, name, got.Question[0].Qtype)
		}
		seen[name] = true
	}
	if len(seen) < 32 {
		t.Errorf("64 sends in %d cases, want nearly each its own", len(seen))
	}
}
