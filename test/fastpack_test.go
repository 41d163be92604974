package test

import (
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/freeport"
)

// TestFastpackLeavesTSIGToTheStandardPath: with fastpack in front of the
// stock tsig plugin, a signed query gets a response whose TSIG verifies
// (miekg/dns's client checks the MAC), because fastpack hands signed
// responses to miekg/dns and counts them; unsigned queries stay on the fast
// path and are not counted.
func TestFastpackLeavesTSIGToTheStandardPath(t *testing.T) {
	const key, secret = "transfer.key.", "c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0LXNlY3JldA=="
	zf := filepath.Join(t.TempDir(), "db.example.org")
	writeZone(t, zf, 1, "www A 192.0.2.1")
	metrics := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	s := startCoreDNS(t, fmt.Sprintf(`    prometheus %s
    fastpack
    tsig {
        secret %s %s
    }
    zonestore %s example.org`, metrics, key, secret, zf), "example.org")

	if got := answerA(t, s.addr, "www.example.org."); got != "192.0.2.1" {
		t.Fatalf("unsigned query answered %s", got)
	}
	fallback := `coredns_fastpack_fallbacks_total{reason="tsig"}`
	if n := metric(t, metrics, fallback); n != 0 {
		t.Fatalf("%s = %v after an unsigned query, want 0", fallback, n)
	}

	for _, network := range []string{"udp", "tcp"} {
		m := new(dns.Msg)
		m.SetQuestion("www.example.org.", dns.TypeA)
		m.SetTsig(key, dns.HmacSHA256, 300, time.Now().Unix())
		c := &dns.Client{Net: network, TsigSecret: map[string]string{key: secret}, Timeout: 2 * time.Second}
		r, _, err := c.Exchange(m, s.addr)
		if err != nil {
			t.Fatalf("signed query over %s: %v", network, err)
		}
		if r.IsTsig() == nil || len(r.Answer) != 1 {
			t.Fatalf("signed query over %s: want a signed answer, got %v", network, r)
		}
	}
	if n := metric(t, metrics, fallback); n != 2 {
		t.Fatalf("%s = %v after two signed queries, want 2", fallback, n)
	}
}
