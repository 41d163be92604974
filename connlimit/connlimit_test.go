package connlimit

import (
	"fmt"
	"net/netip"
	"testing"
	"time"
)

// open is a fake kernel: the connections it holds open.
type open map[Conn]bool

func (o open) alive(c Conn) (bool, error) { return o[c], nil }

var local = netip.MustParseAddrPort("192.0.2.53:53")

func conn(client string, port uint16) Conn {
	return Conn{netip.AddrPortFrom(netip.MustParseAddr(client), port), local}
}

func TestPerClientAtItsEdge(t *testing.T) {
	k := open{}
	now := time.Unix(1000, 0)
	l := New(3, 100, k.alive)
	l.Now = func() time.Time { return now }
	for p := uint16(1); p <= 3; p++ {
		c := conn("198.51.100.1", p)
		k[c] = true
		if v := l.Admit(c); v != Admitted {
			t.Fatalf("connection %d: %v", p, v)
		}
	}
	if v := l.Admit(conn("198.51.100.1", 4)); v != PerClient {
		t.Fatalf("a fourth while three are open: %v, want per-client", v)
	}
	// The same address IPv4-mapped is the same client.
	mapped := Conn{netip.AddrPortFrom(netip.MustParseAddr("::ffff:198.51.100.1"), 5), local}
	if v := l.Admit(mapped); v != PerClient {
		t.Fatalf("the client as an IPv4-mapped address: %v", v)
	}
	if v := l.Admit(conn("198.51.100.2", 1)); v != Admitted {
		t.Fatalf("another client: %v", v)
	}
	// An IPv6 client is its /64: another address in it is the same client.
	for i, a := range []string{"2001:db8:1:2::1", "2001:db8:1:2::2", "2001:db8:1:2:ffff::3"} {
		c := conn(a, 1)
		k[c] = true
		if v := l.Admit(c); v != Admitted {
			t.Fatalf("IPv6 connection %d: %v", i+1, v)
		}
	}
	if v := l.Admit(conn("2001:db8:1:2::4", 1)); v != PerClient {
		t.Fatalf("a fourth address of one /64: %v, want per-client", v)
	}
	if v := l.Admit(conn("2001:db8:1:3::1", 1)); v != Admitted {
		t.Fatalf("the next /64: %v", v)
	}
	// One closes: the next is admitted, found out when it asks (the
	// kernel is asked about a client at most every askEvery).
	delete(k, conn("198.51.100.1", 2))
	if v := l.Admit(conn("198.51.100.1", 8)); v != PerClient {
		t.Fatalf("asked again within askEvery: %v", v)
	}
	now = now.Add(askEvery)
	c := conn("198.51.100.1", 6)
	k[c] = true
	if v := l.Admit(c); v != Admitted {
		t.Fatalf("after one closed: %v", v)
	}
	if v := l.Admit(conn("198.51.100.1", 7)); v != PerClient {
		t.Fatalf("at the limit again: %v", v)
	}
}

func TestFullTableSweepsOncePerSecond(t *testing.T) {
	k := open{}
	now := time.Unix(1000, 0)
	l := New(0, 10, k.alive)
	l.Now = func() time.Time { return now }
	for i := range 10 {
		c := conn(fmt.Sprintf("198.51.100.%d", i), 1)
		k[c] = true
		if v := l.Admit(c); v != Admitted {
			t.Fatalf("connection %d: %v", i, v)
		}
	}
	if v := l.Admit(conn("203.0.113.1", 1)); v != Full {
		t.Fatalf("the eleventh: %v, want full", v)
	}
	// Half close; within the second the table is not swept again.
	for i := range 5 {
		delete(k, conn(fmt.Sprintf("198.51.100.%d", i), 1))
	}
	if v := l.Admit(conn("203.0.113.1", 2)); v != Full {
		t.Fatalf("swept twice in a second: %v", v)
	}
	now = now.Add(time.Second)
	for i := range 5 {
		if v := l.Admit(conn("203.0.113.2", uint16(i+1))); v != Admitted {
			t.Fatalf("after the sweep, connection %d: %v", i, v)
		}
	}
	if l.Held() != 10 {
		t.Fatalf("held %d, want 10", l.Held())
	}
}

// TestTableNeverOutgrowsItsBound: a million clients, each one connection
// that closes at once, never hold more than the bound.
func TestTableNeverOutgrowsItsBound(t *testing.T) {
	now := time.Unix(1000, 0)
	l := New(2, 1000, func(Conn) (bool, error) { return false, nil })
	l.Now = func() time.Time { now = now.Add(time.Millisecond); return now }
	for i := range 1_000_000 {
		a := netip.AddrFrom4([4]byte{10, byte(i >> 16), byte(i >> 8), byte(i)})
		l.Admit(Conn{netip.AddrPortFrom(a, 1), local})
		if l.Held() > 1000 || len(l.clients) > 1000 {
			t.Fatalf("after %d clients the table holds %d connections of %d clients", i+1, l.Held(), len(l.clients))
		}
	}
}

// TestClientAtItsBoundAsksSeldom: a client at its bound that connects a
// thousand times in a millisecond costs one round of questions, not a
// thousand.
func TestClientAtItsBoundAsksSeldom(t *testing.T) {
	asked := 0
	now := time.Unix(1000, 0)
	l := New(64, 1000, func(Conn) (bool, error) { asked++; return true, nil })
	l.Now = func() time.Time { return now }
	for p := range 1064 {
		l.Admit(conn("198.51.100.1", uint16(p+1)))
		now = now.Add(time.Microsecond)
	}
	if asked != 64 {
		t.Fatalf("asked the kernel %d times, want 64 (one round)", asked)
	}
}

// An error from the kernel counts the connection as open: the bound holds.
func TestErrorCountsAsOpen(t *testing.T) {
	l := New(1, 10, func(Conn) (bool, error) { return false, fmt.Errorf("no answer") })
	l.Admit(conn("198.51.100.1", 1))
	if v := l.Admit(conn("198.51.100.1", 2)); v != PerClient {
		t.Fatalf("%v, want per-client", v)
	}
}

// BenchmarkAdmit: what an accepted connection costs below the limits
// (the table holds 1,000 clients' connections, none asked about).
func BenchmarkAdmit(b *testing.B) {
	l := New(0, 1<<30, func(Conn) (bool, error) { return true, nil })
	conns := make([]Conn, 1000)
	for i := range conns {
		conns[i] = conn(fmt.Sprintf("10.0.%d.%d", i/256, i%256), 1)
	}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		l.Admit(conns[i%len(conns)])
		i++
	}
}

// TestReleasedConnectionsCountNoMore: a connection the server released is
// out of the table at once, its client's slot free without asking the
// kernel (which here still calls it open), and the table's count with it;
// releasing one not held, or twice, changes nothing.
func TestReleasedConnectionsCountNoMore(t *testing.T) {
	k := open{}
	l := New(2, 3, k.alive)
	now := time.Unix(1000, 0)
	l.Now = func() time.Time { return now } // never askEvery later: the kernel is not asked again
	a, b := conn("198.51.100.1", 1), conn("198.51.100.1", 2)
	for _, c := range []Conn{a, b} {
		k[c] = true
		if v := l.Admit(c); v != Admitted {
			t.Fatal(v)
		}
	}
	if v := l.Admit(conn("198.51.100.1", 3)); v != PerClient {
		t.Fatalf("a third while two are held: %v", v)
	}
	l.Release(a)
	l.Release(a)
	l.Release(conn("198.51.100.9", 1))
	if n := l.Held(); n != 1 {
		t.Fatalf("%d held after a release, want 1", n)
	}
	c := conn("198.51.100.1", 3)
	if v := l.Admit(c); v != Admitted {
		t.Fatalf("after a release: %v", v)
	}
	l.Release(c)
	// Many opened and released in turn, beside one held, never reach the
	// bound.
	for p := uint16(10); p < 200; p++ {
		c := conn("198.51.100.1", p)
		if v := l.Admit(c); v != Admitted {
			t.Fatalf("connection %d, the one before released: %v", p, v)
		}
		l.Release(c)
	}
	l.Release(b)
	if n := l.Held(); n != 0 {
		t.Fatalf("%d held, want 0", n)
	}
	if len(l.clients) != 0 {
		t.Fatalf("%d clients left in the table", len(l.clients))
	}
}
