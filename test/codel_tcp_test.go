package test

import (
	"encoding/binary"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// TestCodelListensForTCP: codel's TCP listeners (one a CPU, steered to by
// SO_INCOMING_CPU) take every connection, on a server bound to 127.0.0.1
// and on one bound to every address, and read through a buffer: on each
// of 10 connections, 40 queries written at once, one written in two parts
// a moment apart, and one longer than the buffer are all answered, each
// with its own ID. codel_tcp_accepts_total counts the 10 connections. With
// `socket off` or `tcp_listeners off` CoreDNS's listener takes them, and
// answers the same; so it
// does with the proxyproto plugin, whose PROXY header (sent first on each
// connection) codel's listeners would not read.
func TestCodelListensForTCP(t *testing.T) {
	for _, c := range []struct {
		name, bind, codel, proxy string
		ours                     bool
	}{
		{"bound", "127.0.0.1", "    codel\n", "", true},
		{"every address", "", "    codel\n", "", true},
		{"socket off", "127.0.0.1", "    codel {\n        socket off\n    }\n", "", false},
		{"tcp_listeners off", "127.0.0.1", "    codel {\n        tcp_listeners off\n    }\n", "", false},
		{"proxyproto", "127.0.0.1", "    proxyproto\n    codel\n", "PROXY TCP4 192.0.2.9 127.0.0.1 5300 53\r\n", false},
	} {
		t.Run(c.name, func(t *testing.T) {
			dir := t.TempDir()
			zf := filepath.Join(dir, "db.example.org")
			writeZone(t, zf, 1, "www A 192.0.2.1")
			port, prom := freeport.Get(t), fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
			bind := ""
			if c.bind != "" {
				bind = "    bind " + c.bind + "\n"
			}
			path := filepath.Join(dir, "Corefile")
			corefile := fmt.Sprintf(".:%d {\n%s    prometheus %s\n%s    zonestore %s example.org\n}\n", port, bind, prom, c.codel, zf)
			if err := os.WriteFile(path, []byte(corefile), 0o644); err != nil {
				t.Fatal(err)
			}
			s := start(t, "coredns", exec.Command(corednsBin, "-conf", path), port, "example.org")
			accepts := func() float64 {
				return metric(t, prom, fmt.Sprintf(`coredns_codel_tcp_accepts_total{server="dns://%s:%d"}`, c.bind, port))
			}
			before := accepts()
			const conns = 10
			for range conns {
				pipelined(t, s.addr, c.proxy)
			}
			got := accepts() - before
			switch {
			case !c.ours && got != 0:
				t.Fatalf("codel's listeners took %v of %d connections, want none", got, conns)
			case c.ours && steersByCPU(t) && got != conns:
				t.Fatalf("codel's listeners took %v of %d connections, want all", got, conns)
			case c.ours && got == 0:
				// Before Linux 6.2 the kernel spreads them by their hash,
				// over codel's listeners and CoreDNS's.
				t.Fatalf("codel's listeners took none of %d connections", conns)
			}
		})
	}
}

// pipelined opens a TCP connection to addr, writes header on it, and asks
// for www.example.org 42 times: 40 queries in one write, one in two
// writes 50 ms apart, one padded past the server's read buffer (3,000
// octets of EDNS padding). Each must be answered, with its own ID, by the
// one A record.
func pipelined(t *testing.T, addr, header string) {
	t.Helper()
	conn, err := net.DialTimeout("tcp", addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	conn.SetDeadline(time.Now().Add(5 * time.Second))
	framed := func(id uint16, pad int) []byte {
		m := new(dns.Msg)
		m.SetQuestion("www.example.org.", dns.TypeA)
		m.Id = id
		if pad > 0 {
			m.SetEdns0(1232, false)
			opt := m.IsEdns0()
			opt.Option = append(opt.Option, &dns.EDNS0_PADDING{Padding: make([]byte, pad)})
		}
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return append(binary.BigEndian.AppendUint16(nil, uint16(len(b))), b...)
	}
	batch := []byte(header)
	for id := uint16(1); id <= 40; id++ {
		batch = append(batch, framed(id, 0)...)
	}
	if _, err := conn.Write(batch); err != nil {
		t.Fatal(err)
	}
	split := framed(41, 0)
	conn.Write(split[:7])
	time.Sleep(50 * time.Millisecond)
	conn.Write(split[7:])
	conn.Write(framed(42, 3000))

	co := &dns.Conn{Conn: conn}
	seen := map[uint16]bool{}
	for range 42 {
		r, err := co.ReadMsg()
		if err != nil {
			t.Fatalf("after %d answers: %v", len(seen), err)
		}
		if seen[r.Id] || r.Id < 1 || r.Id > 42 {
			t.Fatalf("an answer with ID %d, seen or never asked", r.Id)
		}
		seen[r.Id] = true
		if len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != "192.0.2.1" {
			t.Fatalf("query %d answered %v", r.Id, r)
		}
	}
}

// TestCodelHoldsNoAnswerBehindAWait: where a plugin of the server may wait
// in place (alias waits for its lookup on a TCP connection's goroutine),
// codel's listeners write each answer as it is made. A query answered
// from the zone, an ALIAS query whose lookup the upstream holds until the
// first answer has come, and another from the zone, written at once on
// one connection: the first answer must come while the lookup waits (held
// until the batch is served, it would come only after the 5 s the lookup
// may wait), then the other two.
func TestCodelHoldsNoAnswerBehindAWait(t *testing.T) {
	release := make(chan struct{})
	up := &dns.Server{Addr: fmt.Sprintf("127.0.0.1:%d", freeport.Get(t)), Net: "udp",
		Handler: dns.HandlerFunc(func(w dns.ResponseWriter, r *dns.Msg) {
			<-release
			m := new(dns.Msg)
			m.SetReply(r)
			m.Answer = append(m.Answer, &dns.A{Hdr: dns.RR_Header{Name: r.Question[0].Name, Rrtype: dns.TypeA, Class: dns.ClassINET, Ttl: 60}, A: net.IPv4(198, 51, 100, 1)})
			w.WriteMsg(m)
		})}
	started := make(chan struct{})
	up.NotifyStartedFunc = func() { close(started) }
	go up.ListenAndServe()
	<-started
	defer up.Shutdown()
	var once sync.Once
	defer once.Do(func() { close(release) })

	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1", "held 300 ALIAS x.held.test.")
	s := startCoreDNS(t, fmt.Sprintf("    codel {\n        deadline 5s\n    }\n    alias {\n        upstream %s\n        timeout 5s\n    }\n    zonestore %s example.org", up.Addr, zf), "example.org")

	conn, err := net.DialTimeout("tcp", s.addr, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	var batch []byte
	for i, name := range []string{"www.example.org.", "held.example.org.", "www.example.org."} {
		m := new(dns.Msg)
		m.SetQuestion(name, dns.TypeA)
		m.Id = uint16(i + 1)
		b, _ := m.Pack()
		batch = append(append(batch, byte(len(b)>>8), byte(len(b))), b...)
	}
	if _, err := conn.Write(batch); err != nil {
		t.Fatal(err)
	}
	co := &dns.Conn{Conn: conn}
	conn.SetReadDeadline(time.Now().Add(3 * time.Second))
	first, err := co.ReadMsg()
	if err != nil {
		t.Fatalf("no answer while the ALIAS lookup waited: %v", err)
	}
	if first.Id != 1 || len(first.Answer) != 1 {
		t.Fatalf("first answer: %v", first)
	}
	once.Do(func() { close(release) })
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	second, err := co.ReadMsg()
	if err != nil || second.Id != 2 || len(second.Answer) != 1 || second.Answer[0].(*dns.A).A.String() != "198.51.100.1" {
		t.Fatalf("the ALIAS answer: %v, %v", second, err)
	}
	if third, err := co.ReadMsg(); err != nil || third.Id != 3 || len(third.Answer) != 1 {
		t.Fatalf("the third answer: %v, %v", third, err)
	}
}

// steersByCPU says whether this kernel gives a TCP connection to the
// listener of the CPU that took its SYN, where one asks (SO_INCOMING_CPU):
// Linux 6.2 and later.
func steersByCPU(t *testing.T) bool {
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	if err != nil {
		t.Fatal(err)
	}
	var major, minor int
	if _, err := fmt.Sscanf(string(b), "%d.%d", &major, &minor); err != nil {
		t.Fatalf("kernel release %q: %v", b, err)
	}
	return major > 6 || major == 6 && minor >= 2
}
