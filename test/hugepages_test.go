package test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/hugeheap"
)

// TestZonesInHugePages serves a zone of 40,000 names and checks that the
// server's heap is held in huge pages by the time it answers
// (internal/hugeheap, plugin/zonestore's collapseHeap), and that with
// ONTIME_HUGE_PAGES=0 it is not, where the system gives huge pages only on
// request.
func TestZonesInHugePages(t *testing.T) {
	if _, err := hugeheap.Pass(); errors.Is(err, hugeheap.ErrUnsupported) {
		t.Skip(err)
	}
	var zone strings.Builder
	zone.WriteString("$ORIGIN huge.example.\n$TTL 300\n@ SOA ns.huge.example. host.huge.example. 1 3600 600 86400 300\n@ NS ns\nns A 192.0.2.1\n")
	for i := range 40000 {
		fmt.Fprintf(&zone, "h%d A 10.%d.%d.%d\n", i, i>>16, i>>8&255, i&255)
	}
	zf := filepath.Join(t.TempDir(), "huge.example.zone")
	if err := os.WriteFile(zf, []byte(zone.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	body := "    codel\n    fastpack\n    zonestore " + zf + " huge.example"

	s := startCoreDNS(t, body, "huge.example")
	if huge := anonHugeKB(t, s.cmd.Process.Pid); huge < 4<<10 && strings.Contains(s.log.String(), "no huge page free") {
		t.Skipf("the kernel had no huge pages free: %d kB collapsed", huge)
	} else if huge < 4<<10 {
		t.Fatalf("the server's heap holds %d kB in huge pages, want 4 MiB at least", huge)
	}
	m := new(dns.Msg)
	m.SetQuestion("h39999.huge.example.", dns.TypeA)
	r, err := exchange(t, s.addr, m, false)
	if err != nil || len(r.Answer) != 1 || r.Answer[0].(*dns.A).A.String() != "10.0.156.63" {
		t.Fatalf("after the collapse: %v %v", r, err)
	}

	thp, _ := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if strings.Contains(string(thp), "[always]") {
		t.Log("the system gives every program huge pages: ONTIME_HUGE_PAGES=0 not checked")
		return
	}
	off := startCoreDNSWith(t, []string{"ONTIME_HUGE_PAGES=0"}, body, "huge.example")
	if kb := anonHugeKB(t, off.cmd.Process.Pid); kb != 0 {
		t.Fatalf("ONTIME_HUGE_PAGES=0: %d kB in huge pages", kb)
	}
}

// anonHugeKB reads a process's AnonHugePages, in kB.
func anonHugeKB(t *testing.T, pid int) int {
	t.Helper()
	kb, err := hugeheap.Rollup(pid, "AnonHugePages")
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip(err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return kb
}
