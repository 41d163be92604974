package rrl

import (
	"net/netip"
	"testing"
	"time"
)

// TestSipHash24 is the test vector of the SipHash paper (appendix A): key
// 00..0f, message 00..0e.
func TestSipHash24(t *testing.T) {
	var k [16]byte
	for i := range k {
		k[i] = byte(i)
	}
	m := make([]byte, 15)
	for i := range m {
		m[i] = byte(i)
	}
	if got := sipHash24(k, m); got != 0xa129ca6149be45e5 {
		t.Fatalf("SipHash-2-4 = %x, want a129ca6149be45e5", got)
	}
	if got := sipHash24(k, nil); got != 0x726fdb47dd0e0e31 {
		t.Fatalf("SipHash-2-4 of nothing = %x, want 726fdb47dd0e0e31", got)
	}
}

// TestRFC9018Vector checks a server cookie of RFC 9018's appendix A.1
// (client 2464c4abcf10c957, address 198.51.100.100, secret e5e973e5a6b2a43f
// 48e7dc849e37bfcf, timestamp 1559731985).
func TestRFC9018Vector(t *testing.T) {
	secret := []byte{0xe5, 0xe9, 0x73, 0xe5, 0xa6, 0xb2, 0xa4, 0x3f, 0x48, 0xe7, 0xdc, 0x84, 0x9e, 0x37, 0xbf, 0xcf}
	c := NewCookies(secret)
	c.now = func() time.Time { return time.Unix(1559731985, 0) }
	client := []byte{0x24, 0x64, 0xc4, 0xab, 0xcf, 0x10, 0xc9, 0x57}
	got := c.Make(client, netip.MustParseAddr("198.51.100.100"))
	want := [16]byte{0x01, 0x00, 0x00, 0x00, 0x5c, 0xf7, 0x9f, 0x11, 0x1f, 0x81, 0x30, 0xc3, 0xee, 0xe2, 0x94, 0x80}
	if got != want {
		t.Fatalf("server cookie %x, want %x", got, want)
	}
}

func TestCookieValidity(t *testing.T) {
	c := NewCookies(nil)
	now := time.Unix(1_800_000_000, 0)
	c.now = func() time.Time { return now }
	client := []byte("abcdefgh")
	addr := netip.MustParseAddr("192.0.2.1")
	s := c.Make(client, addr)
	if !c.Valid(client, s[:], addr) {
		t.Fatal("a fresh cookie is not valid")
	}
	if !c.Valid(client, s[:], netip.MustParseAddr("::ffff:192.0.2.1")) {
		t.Fatal("the same address, mapped, is not the same client")
	}
	for what, ok := range map[string]bool{
		"another address": c.Valid(client, s[:], netip.MustParseAddr("192.0.2.2")),
		"another client":  c.Valid([]byte("abcdefgX"), s[:], addr),
		"another secret":  NewCookies(nil).Valid(client, s[:], addr),
		"cut short":       c.Valid(client, s[:8], addr),
	} {
		if ok {
			t.Errorf("valid for %s", what)
		}
	}
	now = now.Add(59 * time.Minute)
	if !c.Valid(client, s[:], addr) {
		t.Fatal("not valid after 59 minutes")
	}
	now = now.Add(2 * time.Minute)
	if c.Valid(client, s[:], addr) {
		t.Fatal("still valid after 61 minutes")
	}
	for n, want := range map[int]bool{0: false, 7: false, 8: true, 9: false, 15: false, 16: true, 24: true, 40: true, 41: false} {
		if WellFormed(n) != want {
			t.Errorf("WellFormed(%d) = %v", n, !want)
		}
	}
}
