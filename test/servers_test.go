package test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// The tests here run real servers: the ontime coredns binary, built once for
// the package, and Knot DNS (knotd from Debian's knot package) as the
// reference for what a correct answer is. All traffic stays on 127.0.0.1.

var corednsBin string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ontime-test")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	corednsBin = filepath.Join(dir, "coredns")
	args := []string{"build", "-o", corednsBin}
	if os.Getenv("ONTIME_RACE") != "" {
		// The binary under the race detector, halting at the first race:
		// ONTIME_RACE=1 GORACE=halt_on_error=1 go test ./test/
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, "../cmd/coredns")...)
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building coredns:", err)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// repoRoot returns the absolute path of the repository.
func repoRoot(t testing.TB) string {
	_, file, _, _ := runtime.Caller(0)
	return filepath.Dir(filepath.Dir(file))
}

// server is a started DNS server process.
type server struct {
	name string
	addr string
	cmd  *exec.Cmd
	log  *processLog
}

// processLog is a process's output as it comes, which exec copies from
// the process while a test reads it.
type processLog struct {
	mu sync.Mutex
	b  strings.Builder
}

func (l *processLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *processLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// start runs cmd and waits until it answers an SOA query for every zone
// (with no zone, until it accepts TCP connections).
func start(t testing.TB, name string, cmd *exec.Cmd, port int, zones ...string) *server {
	t.Helper()
	s := &server{name: name, addr: fmt.Sprintf("127.0.0.1:%d", port), cmd: cmd, log: &processLog{}}
	cmd.Stdout, cmd.Stderr = s.log, s.log
	if err := cmd.Start(); err != nil {
		t.Fatalf("starting %s: %v", name, err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("%s output:\n%s", name, s.log.String())
		}
	})
	deadline := time.Now().Add(20 * time.Second)
	if len(zones) == 0 {
		// No zone to ask for (a server of erratic, say): wait for its TCP
		// listener, which CoreDNS opens with the UDP one.
		for {
			c, err := net.DialTimeout("tcp", s.addr, 200*time.Millisecond)
			if err == nil {
				c.Close()
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not listen on %s: %v\n%s", name, s.addr, err, s.log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	for _, z := range zones {
		for {
			m := new(dns.Msg)
			m.SetQuestion(dns.Fqdn(z), dns.TypeSOA)
			c := &dns.Client{Timeout: 200 * time.Millisecond}
			r, _, err := c.Exchange(m, s.addr)
			if err == nil && r.Rcode == dns.RcodeSuccess && len(r.Answer) > 0 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("%s did not answer for %s: %v\n%s", name, z, err, s.log.String())
			}
			time.Sleep(50 * time.Millisecond)
		}
	}
	return s
}

// stop ends a server started by start, as an outage or a restart would.
func (s *server) stop() {
	s.cmd.Process.Kill()
	s.cmd.Wait()
}

// zoneFile is one zone a test serves.
type zoneFile struct {
	origin string
	path   string
}

// startKnot runs knotd serving the zone files as they are (pre-signed, no
// signing of its own), or skips the test where knotd is not installed and
// ONTIME_REQUIRE_KNOT is unset (`make test` installs it and sets it).
func startKnot(t testing.TB, zones []zoneFile) *server {
	t.Helper()
	bin := knotd(t)
	dir := t.TempDir()
	port := freeport.Get(t)
	var b strings.Builder
	knotServer(&b, dir, port, "warning")
	// Transfers allowed from loopback: AXFR is compared with Knot's too.
	b.WriteString("acl:\n  - id: xfr\n    address: 127.0.0.1\n    action: transfer\n")
	b.WriteString("template:\n  - id: default\n    zonefile-sync: -1\n    zonefile-load: whole\n    journal-content: none\n    acl: xfr\n")
	b.WriteString("zone:\n")
	names := make([]string, 0, len(zones))
	for _, z := range zones {
		fmt.Fprintf(&b, "  - domain: %s\n    file: %s\n", z.origin, z.path)
		names = append(names, z.origin)
	}
	conf := filepath.Join(dir, "knot.conf")
	if err := os.WriteFile(conf, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	return start(t, "knotd", exec.Command(bin, "-c", conf), port, names...)
}

// knotd returns the path of knotd, or skips the test where it is not
// installed and ONTIME_REQUIRE_KNOT is unset (`make test` installs it and
// sets it).
func knotd(t testing.TB) string {
	t.Helper()
	bin, err := exec.LookPath("knotd")
	if err != nil {
		if os.Getenv("ONTIME_REQUIRE_KNOT") != "" {
			t.Fatal("knotd not found: install Debian's knot package (make test does)")
		}
		t.Skip("knotd not found; `make test` installs it")
	}
	return bin
}

// knotServer writes the part of a Knot configuration every test's Knot
// shares: the listener on 127.0.0.1, its directories (with the control
// socket knotc uses), the user when run as root, and the log level.
func knotServer(b *strings.Builder, dir string, port int, level string) {
	fmt.Fprintf(b, "server:\n    listen: 127.0.0.1@%d\n    rundir: %s\n", port, dir)
	if os.Geteuid() == 0 {
		b.WriteString("    user: root:root\n")
	}
	fmt.Fprintf(b, "log:\n  - target: stderr\n    any: %s\n", level)
	fmt.Fprintf(b, "database:\n    storage: %s\n", dir)
	fmt.Fprintf(b, "control:\n    listen: %s/knot.sock\n", dir)
}

// startCoreDNS runs the ontime binary with a Corefile; body is the server
// block's contents and zones are waited for. The Corefile is returned by the server's log on failure.
func startCoreDNS(t testing.TB, body string, zones ...string) *server {
	t.Helper()
	return startCoreDNSWith(t, nil, body, zones...)
}

// startWWW starts a server with prometheus (on a port of its own), then
// plugins, then zonestore answering example.org (www A 192.0.2.1), and
// returns it with its metrics' address.
func startWWW(t *testing.T, plugins string) (*server, string) {
	t.Helper()
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	metrics := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	return startCoreDNS(t, fmt.Sprintf("    prometheus %s\n%s    zonestore %s example.org\n", metrics, plugins, zf), "example.org"), metrics
}

// onePAnswer is the environment of a server that answers on one P: the
// one whose per-P caches (zonestore's replay) a test asks to meet again.
var onePAnswer = []string{"GOMAXPROCS=1"}

// startCoreDNSWith is startCoreDNS with env added to the server's
// environment.
func startCoreDNSWith(t testing.TB, env []string, body string, zones ...string) *server {
	t.Helper()
	dir := t.TempDir()
	port := freeport.Get(t)
	corefile := fmt.Sprintf(".:%d {\n    bind 127.0.0.1\n%s\n}\n", port, body)
	path := filepath.Join(dir, "Corefile")
	if err := os.WriteFile(path, []byte(corefile), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(corednsBin, "-conf", path)
	cmd.Dir = repoRoot(t)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return start(t, "coredns", cmd, port, zones...)
}

// exchange sends m over UDP or TCP and returns the answer.
func exchange(t testing.TB, addr string, m *dns.Msg, tcp bool) (*dns.Msg, error) {
	c := &dns.Client{Timeout: 2 * time.Second}
	if tcp {
		c.Net = "tcp"
	}
	var r *dns.Msg
	var err error
	for range 3 { // UDP on a loaded 2-core machine may lose a packet
		r, _, err = c.Exchange(m, addr)
		if err == nil {
			return r, nil
		}
	}
	return r, err
}

// exchangeBoth sends m to Knot at knot and to ontime at ours, over UDP or
// TCP, and returns the two answers; the test fails where either fails.
func exchangeBoth(t testing.TB, knot, ours string, m *dns.Msg, tcp bool) (*dns.Msg, *dns.Msg) {
	t.Helper()
	k, err := exchange(t, knot, m, tcp)
	if err != nil {
		t.Fatalf("Knot: %v", err)
	}
	o, err := exchange(t, ours, m, tcp)
	if err != nil {
		t.Fatalf("ontime: %v", err)
	}
	return k, o
}

// querying asks for name's A records from workers goroutines over UDP, one
// query after another, until the returned stop is called. An answer is
// wrong when the exchange fails, when it is not NOERROR with one record,
// or when that record's address is none of addrs (any, if none given).
// stop returns how many answers were wrong, of how many, and the first,
// with when it was seen and, where there were more, the last.
func querying(addr, name string, workers int, addrs ...string) (stop func() (wrong, all int64, first string)) {
	var done atomic.Bool
	var wrongs, total atomic.Int64
	var once sync.Once
	var firstWrong string
	began := time.Now()
	var lastAt atomic.Int64 // when the last failure was seen, since began
	fail := func(what string) {
		wrongs.Add(1)
		at := time.Since(began)
		lastAt.Store(int64(at))
		// When the failures came says what they were: a stall (every
		// worker's query at once) or queries lost one by one.
		once.Do(func() { firstWrong = fmt.Sprintf("%s, %v after the queries began", what, at.Round(time.Millisecond)) })
	}
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c := &dns.Client{Timeout: time.Second}
			for !done.Load() {
				total.Add(1)
				q := new(dns.Msg)
				q.SetQuestion(name, dns.TypeA)
				r, _, err := c.Exchange(q, addr)
				if err != nil || r.Rcode != dns.RcodeSuccess || len(r.Answer) != 1 {
					fail(fmt.Sprint(err, r))
					continue
				}
				if a := r.Answer[0].(*dns.A).A.String(); len(addrs) > 0 && !slices.Contains(addrs, a) {
					fail(a)
				}
			}
		}()
	}
	return func() (int64, int64, string) {
		done.Store(true)
		wg.Wait()
		if wrongs.Load() > 1 {
			firstWrong += fmt.Sprintf("; the last %v after", time.Duration(lastAt.Load()).Round(time.Millisecond))
		}
		return wrongs.Load(), total.Load(), firstWrong
	}
}
