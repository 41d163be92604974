package test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// The limits of one server, each at its edge (README.md, "Limits").

// TestOversizedUDPQuery: codel reads a UDP datagram into 4,096 octets; a
// longer query is cut short by the kernel, fails to unpack and is answered
// FORMERR (or not at all), and the server goes on answering.
func TestOversizedUDPQuery(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	s := startCoreDNS(t, fmt.Sprintf("    codel\n    fastpack\n    zonestore %s example.org\n", zf), "example.org")
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	m.SetEdns0(4096, false)
	m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_PADDING{Padding: make([]byte, 6000)})
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	c, err := net.Dial("udp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.Write(b)
	c.SetReadDeadline(time.Now().Add(time.Second))
	buf := make([]byte, 4096)
	if n, err := c.Read(buf); err == nil {
		r := new(dns.Msg)
		if r.Unpack(buf[:n]) != nil || r.Rcode != dns.RcodeFormatError || r.Id != m.Id {
			t.Fatalf("a %d-octet query got %v, want FORMERR or nothing", len(b), r)
		}
	}
	if a := answerA(t, s.addr, "www.example.org."); a != "192.0.2.1" {
		t.Fatalf("after the oversized query: %s", a)
	}
	if strings.Contains(s.log.String(), "panic") {
		t.Fatalf("a panic:\n%s", s.log.String())
	}
}

// TestTCPIdleTimeout: a TCP connection with nothing asked on it is closed
// after the idle timeout (CoreDNS's 10 s by default; here the stock
// timeouts plugin's 1 s); one in use is served. Its two queries come in
// one write, so that codel's listener reads the second from its buffer,
// and keeps the deadline set before it for the read that waits (bufConn).
func TestTCPIdleTimeout(t *testing.T) {
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	s := startCoreDNS(t, fmt.Sprintf("    timeouts {\n        idle 1s\n    }\n    codel\n    zonestore %s example.org\n", zf), "example.org")
	conn, err := net.Dial("tcp", s.addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	dc := &dns.Conn{Conn: conn}
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	wire, _ := m.Pack()
	framed := append(binary.BigEndian.AppendUint16(nil, uint16(len(wire))), wire...)
	if _, err := conn.Write(append(framed, framed...)); err != nil {
		t.Fatal(err)
	}
	for range 2 {
		if r, err := dc.ReadMsg(); err != nil || len(r.Answer) != 1 {
			t.Fatalf("a query in use: %v %v", err, r)
		}
	}
	start := time.Now()
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	var one [1]byte
	if _, err := conn.Read(one[:]); err != io.EOF {
		t.Fatalf("an idle connection: read %v, want the server to close it", err)
	}
	if d := time.Since(start); d < 900*time.Millisecond || d > 4*time.Second {
		t.Fatalf("closed after %v idle, want about 1 s", d)
	}
}

// TestQueueBoundAtItsEdge: with one worker that may not be replaced and
// room for 4 queued, 20 queries that each take 200 ms at once are
// answered at most 5 at a time; the rest are dropped in codel, counted as
// full or workers, and none is lost uncounted.
func TestQueueBoundAtItsEdge(t *testing.T) {
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    codel {\n        workers 1\n        max_workers 1\n        queue 4\n    }\n    erratic {\n        delay 1 200ms\n    }\n", prom))
	server := "dns://" + s.addr
	c, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	dst, _ := net.ResolveUDPAddr("udp", s.addr)
	for i := range 20 {
		m := new(dns.Msg)
		m.SetQuestion("example.org.", dns.TypeA)
		m.Id = uint16(i + 1)
		b, _ := m.Pack()
		c.WriteToUDP(b, dst)
	}
	answered := 0
	buf := make([]byte, 512)
	for {
		c.SetReadDeadline(time.Now().Add(3 * time.Second))
		n, err := c.Read(buf)
		if err != nil {
			break
		}
		if n >= 2 && binary.BigEndian.Uint16(buf) != 0 {
			answered++
		}
	}
	var dropped float64
	eventually(t, "the drops counted", func() bool {
		dropped = metric(t, prom, `coredns_codel_drops_total{reason="full",server="`+server+`"}`) +
			metric(t, prom, `coredns_codel_drops_total{reason="workers",server="`+server+`"}`) +
			metric(t, prom, `coredns_codel_drops_total{reason="codel",server="`+server+`"}`) +
			metric(t, prom, `coredns_codel_drops_total{reason="deadline",server="`+server+`"}`)
		return int(dropped)+answered == 20
	})
	if answered > 5 || answered == 0 {
		t.Fatalf("%d of 20 answered with one worker and room for 4, want 1 to 5 (%v dropped)", answered, dropped)
	}
}

// TestTCPConnectionsPerClient: with 3 connections a client and 5 in all,
// a client's fourth open connection is closed unanswered while another
// client is served; once one of its three is closed, the client is served
// again; past 5 open in all, a new client is refused. Each refusal is a
// drop counted by codel (reason tcp).
func TestTCPConnectionsPerClient(t *testing.T) {
	s, refusals := startBounded(t, "tcp_per_client 3", "tcp_conns 5")
	open := func(from string) (net.Conn, bool) { return openTCP(t, from, s.addr) }

	var held []net.Conn
	for i := range 3 {
		c, ok := open("127.0.6.1")
		if !ok {
			t.Fatalf("connection %d of 3 from one client was not answered", i+1)
		}
		held = append(held, c)
	}
	if _, ok := open("127.0.6.1"); ok {
		t.Fatal("a fourth connection from a client holding 3 was answered")
	}
	if _, ok := open("127.0.6.2"); !ok {
		t.Fatal("another client was not answered")
	}
	if got := refusals(); got != 1 {
		t.Fatalf("%v refusals counted, want 1", got)
	}

	// The client closes one and waits until the server has closed it too.
	closeTCP(t, held[0])
	time.Sleep(20 * time.Millisecond) // the kernel is asked about one client every 10 ms at most
	if _, ok := open("127.0.6.1"); !ok {
		t.Fatal("after closing one of its 3, the client was not answered")
	}

	// 3 + 1 open; a fifth client's connection is the last the server takes.
	if _, ok := open("127.0.6.3"); !ok {
		t.Fatal("the fifth connection in all was not answered")
	}
	if _, ok := open("127.0.6.4"); ok {
		t.Fatal("a sixth connection in all was answered")
	}
	if got := refusals(); got != 2 {
		t.Fatalf("%v refusals counted, want 2", got)
	}
	if a := answerA(t, s.addr, "www.example.org."); a != "192.0.2.1" {
		t.Fatalf("UDP meanwhile: %s", a)
	}
}

// TestTCPClosedConnectionsFreeTheirSlotsAtOnce: codel's listeners see
// their connections close, so a client at its bound (3) that closes one
// is served again at once, without the 10 ms the kernel is asked about a
// client at most; and a client that opens and closes 50 connections one
// after another, beside two it holds, is refused none.
func TestTCPClosedConnectionsFreeTheirSlotsAtOnce(t *testing.T) {
	if !steersByCPU(t) {
		t.Skip("before Linux 6.2 CoreDNS's listener takes a share of the connections, and finds closes out by asking the kernel")
	}
	s, refusals := startBounded(t, "tcp_per_client 3")
	var held []net.Conn
	for i := range 3 {
		c, ok := openTCP(t, "127.0.7.1", s.addr)
		if !ok {
			t.Fatalf("connection %d of 3 was not answered", i+1)
		}
		held = append(held, c)
	}
	if _, ok := openTCP(t, "127.0.7.1", s.addr); ok {
		t.Fatal("a fourth connection from a client holding 3 was answered")
	}
	closeTCP(t, held[0])
	if _, ok := openTCP(t, "127.0.7.1", s.addr); !ok {
		t.Fatal("at once after closing one of its 3, the client was not answered")
	}
	closeTCP(t, held[1])
	for i := range 50 {
		c, ok := openTCP(t, "127.0.7.1", s.addr)
		if !ok {
			t.Fatalf("connection %d of 50, opened and closed one after another beside 2 held, was refused", i+1)
		}
		closeTCP(t, c)
	}
	if got := refusals(); got != 1 {
		t.Fatalf("%v refusals counted, want 1", got)
	}
}

// startBounded starts a server of example.org with codel's settings, one
// a line, and returns it with the count of codel's TCP refusals.
func startBounded(t *testing.T, settings ...string) (*server, func() float64) {
	t.Helper()
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	prom := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	block := ""
	for _, l := range settings {
		block += "        " + l + "\n"
	}
	s := startCoreDNS(t, fmt.Sprintf("    prometheus %s\n    codel {\n%s    }\n    zonestore %s example.org\n", prom, block, zf), "example.org")
	return s, func() float64 {
		return metric(t, prom, `coredns_codel_drops_total{reason="tcp",server="dns://`+s.addr+`"}`)
	}
}

// closeTCP closes c's sending side and waits until the server has closed
// its side too.
func closeTCP(t *testing.T, c net.Conn) {
	t.Helper()
	c.(*net.TCPConn).CloseWrite()
	c.SetReadDeadline(time.Now().Add(3 * time.Second))
	if _, err := io.ReadAll(c); err != nil {
		t.Fatalf("the server did not close its side: %v", err)
	}
}

// openTCP connects from the address from to addr and asks one query: the
// connection (closed when the test ends), and whether it was answered.
func openTCP(t *testing.T, from, addr string) (net.Conn, bool) {
	t.Helper()
	d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}, Timeout: 2 * time.Second}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	conn.SetDeadline(time.Now().Add(3 * time.Second))
	dc := &dns.Conn{Conn: conn}
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	if err := dc.WriteMsg(m); err != nil {
		return conn, false // refused before the query was written
	}
	r, err := dc.ReadMsg()
	if err != nil {
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			t.Fatalf("from %s: no answer and not closed: %v", from, err)
		}
		return conn, false
	}
	return conn, len(r.Answer) == 1
}

// TestTCPLimitAcrossReloads: the bound per client follows the Corefile
// across reloads (the new server's listener, the new bound), and a reload
// to a Corefile without codel lifts it.
func TestTCPLimitAcrossReloads(t *testing.T) {
	dir := t.TempDir()
	org, other := filepath.Join(dir, "db.example.org"), filepath.Join(dir, "db.example.net")
	writeZone(t, org, 1, "www A 192.0.2.1")
	os.WriteFile(other, []byte(zoneText("example.net", 1, "www A 192.0.2.2")), 0o644)
	port := freeport.Get(t)
	corefile := func(codel, extra string) string {
		return fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n    reload 2s 1s\n%s    zonestore %s example.org\n%s}\n", port, codel, org, extra)
	}
	path := filepath.Join(dir, "Corefile")
	os.WriteFile(path, []byte(corefile("    codel {\n        tcp_per_client 2\n    }\n", "")), 0o644)
	s := start(t, "coredns", exec.Command(corednsBin, "-conf", path), port, "example.org")
	// served opens n connections from one client, all kept open, and says
	// how many were answered.
	served := func(from string, n int) int {
		answered := 0
		for range n {
			if _, ok := openTCP(t, from, s.addr); ok {
				answered++
			}
		}
		return answered
	}
	if got := served("127.0.8.1", 3); got != 2 {
		t.Fatalf("at 2 per client: %d of 3 connections answered", got)
	}

	os.WriteFile(path, []byte(corefile("    codel {\n        tcp_per_client 3\n    }\n", "    zonestore "+other+" example.net\n")), 0o644)
	eventually(t, "the new configuration", func() bool { return answerA(t, s.addr, "www.example.net.") == "192.0.2.2" })
	time.Sleep(time.Second) // the old server stops, and closes its connections
	if got := served("127.0.8.2", 4); got != 3 {
		t.Fatalf("after a reload to 3 per client: %d of 4 connections answered", got)
	}

	os.WriteFile(path, []byte(corefile("", "")), 0o644)
	eventually(t, "the configuration without codel", func() bool { return answerA(t, s.addr, "www.example.net.") != "192.0.2.2" })
	time.Sleep(time.Second)
	if got := served("127.0.8.3", 5); got != 5 {
		t.Fatalf("after a reload without codel: %d of 5 connections answered", got)
	}
}
