package rrl

import (
	"crypto/rand"
	"encoding/binary"
	"net/netip"
	"time"
)

// Cookies makes and checks DNS server cookies (RFC 7873) in the layout of
// RFC 9018: version 1, three reserved octets, the time it was made (seconds,
// 32 bits), and SipHash-2-4 of the client cookie, those eight octets and the
// client's address, under a secret. A query that returns a server cookie
// this server made for that client and address, less than an hour ago,
// comes from the address it claims: it is never rate limited.
type Cookies struct {
	secret [16]byte
	now    func() time.Time
}

// Cookie lengths: a client cookie alone, or with a server cookie of 8 to
// 32 octets (RFC 7873 section 4); the server cookie made here is 16.
const (
	ClientCookieLen = 8
	ServerCookieLen = 16
	minServerLen    = 8
	maxServerLen    = 32
)

// NewCookies returns cookies under secret, or under a random one if secret
// is nil (a server alone; the servers of one anycast address share one).
func NewCookies(secret []byte) *Cookies {
	c := &Cookies{now: time.Now}
	if secret == nil {
		rand.Read(c.secret[:])
	} else {
		copy(c.secret[:], secret)
	}
	return c
}

// WellFormed reports whether a COOKIE option of n octets is one: a client
// cookie, alone or with a server cookie. Any other length is FORMERR.
func WellFormed(n int) bool {
	return n == ClientCookieLen || (n >= ClientCookieLen+minServerLen && n <= ClientCookieLen+maxServerLen)
}

// Make returns a fresh server cookie for client at addr.
func (c *Cookies) Make(client []byte, addr netip.Addr) [ServerCookieLen]byte {
	var s [ServerCookieLen]byte
	s[0] = 1 // version
	binary.BigEndian.PutUint32(s[4:8], uint32(c.now().Unix()))
	binary.LittleEndian.PutUint64(s[8:], c.mac(client, s[:8], addr)) // as SipHash's reference code writes it
	return s
}

// Valid reports whether server is a cookie this secret made for client at
// addr, at most an hour ago and at most five minutes ahead (RFC 9018
// section 4.3; the timestamp compared in serial number arithmetic).
func (c *Cookies) Valid(client, server []byte, addr netip.Addr) bool {
	if len(client) != ClientCookieLen || len(server) != ServerCookieLen || server[0] != 1 {
		return false
	}
	made := binary.BigEndian.Uint32(server[4:8])
	age := int32(uint32(c.now().Unix()) - made)
	if age > 3600 || age < -300 {
		return false
	}
	return binary.LittleEndian.Uint64(server[8:]) == c.mac(client, server[:8], addr)
}

func (c *Cookies) mac(client, head []byte, addr netip.Addr) uint64 {
	var m [8 + 8 + 16]byte
	n := copy(m[:], client)
	n += copy(m[n:], head)
	addr = addr.Unmap()
	if addr.Is4() {
		a := addr.As4()
		n += copy(m[n:], a[:])
	} else {
		a := addr.As16()
		n += copy(m[n:], a[:])
	}
	return sipHash24(c.secret, m[:n])
}
