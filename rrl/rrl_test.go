package rrl

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

type clock struct{ t int64 }

func (c *clock) now() int64          { return c.t }
func (c *clock) add(d time.Duration) { c.t += int64(d) }
func newLimiter(cfg Config) (*Limiter, *clock) {
	c := &clock{t: int64(time.Hour)}
	cfg.Clock = c.now
	return New(cfg), c
}

var client = netip.MustParseAddr("192.0.2.10")

// decide sends n responses and tallies the actions.
func decide(l *Limiter, n int, addr netip.Addr, k Kind, name string) map[Action]int {
	got := map[Action]int{}
	for range n {
		got[l.Decide(addr, k, name, 1)]++
	}
	return got
}

// TestRateThenSlip: a second's worth of responses pass at once, then the
// rest of the burst is limited, every second one slipped; the bucket
// refills at the rate.
func TestRateThenSlip(t *testing.T) {
	l, c := newLimiter(Config{Rate: 10})
	got := decide(l, 30, client, Answer, "www.example.org.")
	if got[Send] != 10 || got[Slip] != 10 || got[Drop] != 10 {
		t.Fatalf("30 at once at rate 10, slip 2: %v, want 10 sent, 10 slipped, 10 dropped", got)
	}
	c.add(100 * time.Millisecond) // one interval: one more
	if got := decide(l, 2, client, Answer, "www.example.org."); got[Send] != 1 {
		t.Fatalf("after 100 ms at rate 10: %v, want one sent", got)
	}
	c.add(2 * time.Second)
	if got := decide(l, 10, client, Answer, "www.example.org."); got[Send] != 10 {
		t.Fatalf("after two idle seconds: %v, want a full second's worth again", got)
	}
}

func TestSlipNever(t *testing.T) {
	l, _ := newLimiter(Config{Rate: 5, Slip: -1})
	if got := decide(l, 20, client, Answer, "a."); got[Slip] != 0 || got[Drop] != 15 {
		t.Fatalf("slip off: %v, want 15 dropped and none slipped", got)
	}
}

// TestKeys: what shares a bucket and what does not.
func TestKeys(t *testing.T) {
	l, _ := newLimiter(Config{Rate: 5})
	decide(l, 5, client, Answer, "www.example.org.")
	for _, c := range []struct {
		what string
		addr netip.Addr
		kind Kind
		name string
		send int
	}{
		{"the same name from the same /24", netip.MustParseAddr("192.0.2.99"), Answer, "www.example.org.", 0},
		{"another name", client, Answer, "mail.example.org.", 5},
		{"another /24", netip.MustParseAddr("192.0.3.10"), Answer, "www.example.org.", 5},
		{"NXDOMAIN in the zone (keyed by zone)", client, NXDomain, "example.org.", 5},
		{"NXDOMAIN in the zone again, another random name: same key", client, NXDomain, "example.org.", 0},
		{"an error", client, Error, "anything.", 5},
		{"an error for another name: the network's one bucket", client, Error, "else.", 0},
	} {
		if got := decide(l, 5, c.addr, c.kind, c.name); got[Send] != c.send {
			t.Errorf("%s: %v, want %d sent", c.what, got, c.send)
		}
	}
}

func TestIPv6Networks(t *testing.T) {
	l, _ := newLimiter(Config{Rate: 5})
	a := netip.MustParseAddr("2001:db8:0:ff::1")
	decide(l, 5, a, Answer, "x.")
	if got := decide(l, 1, netip.MustParseAddr("2001:db8:0:aa::2"), Answer, "x."); got[Send] != 0 {
		t.Fatalf("same /56: %v, want limited", got)
	}
	if got := decide(l, 1, netip.MustParseAddr("2001:db8:0:100::1"), Answer, "x."); got[Send] != 1 {
		t.Fatalf("another /56: %v, want sent", got)
	}
	// An IPv4 client of a dual-stack socket is its IPv4 /24.
	decide(l, 5, client, Answer, "y.")
	if got := decide(l, 1, netip.MustParseAddr("::ffff:192.0.2.200"), Answer, "y."); got[Send] != 0 {
		t.Fatalf("mapped address in the same /24: %v, want limited", got)
	}
}

func TestExempt(t *testing.T) {
	l, _ := newLimiter(Config{Rate: 1, Exempt: []netip.Prefix{netip.MustParsePrefix("192.0.2.0/24")}})
	if got := decide(l, 100, client, Answer, "x."); got[Send] != 100 {
		t.Fatalf("exempt network: %v", got)
	}
	if got := decide(l, 3, netip.MustParseAddr("198.51.100.1"), Answer, "x."); got[Send] != 1 {
		t.Fatalf("other network: %v, want one sent", got)
	}
}

// TestTableIsBounded: a flood from a hundred thousand spoofed networks
// does not grow the table, and a client asking at its own pace meanwhile
// is not limited by it.
func TestTableIsBounded(t *testing.T) {
	l, c := newLimiter(Config{Rate: 20, Buckets: 4096})
	sent := 0
	for i := range 100_000 {
		spoofed := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		l.Decide(spoofed, Answer, fmt.Sprintf("r%d.example.org.", i), 1)
		if i%1000 == 0 {
			c.add(100 * time.Millisecond) // the client: ten a second, half its rate
			if l.Decide(client, Answer, "www.example.org.", 1) == Send {
				sent++
			}
		}
	}
	if len(l.buckets) != 4096 {
		t.Fatalf("table grew to %d", len(l.buckets))
	}
	if sent != 100 {
		t.Fatalf("the client got %d of 100 responses during the flood", sent)
	}
}

// TestASubjectIsDecidedAsItsResponse: DecideSubject with a response's
// Subject counts into the bucket Decide counts it in (a kept answer
// written again is limited with the first), and responses of another
// name, or kind, have subjects of their own.
func TestASubjectIsDecidedAsItsResponse(t *testing.T) {
	l, _ := newLimiter(Config{Rate: 10})
	decide(l, 10, client, Answer, "www.example.org.")
	s := l.Subject(Answer, "www.example.org.", 1)
	if a := l.DecideSubject(client, s); a == Send {
		t.Fatal("the subject of a response whose bucket is spent was sent")
	}
	if a := l.DecideSubject(client, l.Subject(Answer, "mail.example.org.", 1)); a != Send {
		t.Fatalf("another name's response: %v, want sent", a)
	}
	if l.Subject(NXDomain, "www.example.org.", 1) == s || l.Subject(Answer, "www.example.org.", 28) == s {
		t.Fatal("another kind, or type, has the same subject")
	}
	if l.Subject(Error, "a.", 0) != l.Subject(Error, "b.", 0) {
		t.Fatal("errors are counted by kind alone, whatever the name")
	}
}
