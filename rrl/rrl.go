// Package rrl is response rate limiting as Knot DNS, NSD and BIND do it:
// an authoritative server's answers are larger than the queries, so a flood
// of queries with a victim's spoofed source turns the server into an
// amplifier. Responses are counted per client network (an IPv4 /24, an
// IPv6 /56 by default) and per kind of answer, and past a rate a second the
// excess is dropped, except every Nth, which is sent truncated (slip): a
// real client behind the spoofed address retries over TCP, which cannot be
// spoofed, and gets its answer.
//
// The kinds of answer, as BIND and Knot key them: a positive answer by its
// name and type (one name asked again and again); NXDOMAIN, NODATA and
// referrals by their zone (random names under one zone share a bucket:
// a random-subdomain flood is limited as one); errors by the network alone.
//
// The table is a fixed array of buckets chosen by a hash of the key: it
// never grows with the number of sources, spoofed or not. Two keys that
// land in one bucket share it, as in Knot's table; the next one to arrive
// after a bucket has been idle for a second takes it over.
package rrl

import (
	"encoding/binary"
	"hash/maphash"
	"net/netip"
	"sync"
	"time"
)

// Kind is the kind of answer a response is, for its bucket's key.
type Kind uint8

const (
	Answer   Kind = iota // a positive answer: keyed by name and type
	NXDomain             // keyed by zone
	NoData               // keyed by zone
	Referral             // keyed by the delegation's zone
	Error                // SERVFAIL, REFUSED, FORMERR...: keyed by network alone
)

// Action is what to do with a response.
type Action uint8

const (
	Send Action = iota // within the rate
	Slip               // over it: send it truncated, with no records
	Drop               // over it: send nothing
)

func (a Action) String() string {
	switch a {
	case Slip:
		return "slip"
	case Drop:
		return "drop"
	}
	return "send"
}

// Config sets the limits. The zero value of each field is its default.
type Config struct {
	Rate       int            // responses a second per bucket (default 200, as NSD's and Knot's recommended)
	Slip       int            // every Nth limited response is sent truncated (default 2; negative: never)
	IPv4Prefix int            // client network, IPv4 (default 24)
	IPv6Prefix int            // client network, IPv6 (default 56)
	Buckets    int            // table size (default 65536: about 2 MB)
	Exempt     []netip.Prefix // networks never limited
	Clock      func() int64   // nanoseconds, monotonic (default: since the limiter was made)
}

func (c Config) withDefaults() Config {
	if c.Rate <= 0 {
		c.Rate = 200
	}
	if c.Slip == 0 {
		c.Slip = 2
	}
	if c.IPv4Prefix <= 0 || c.IPv4Prefix > 32 {
		c.IPv4Prefix = 24
	}
	if c.IPv6Prefix <= 0 || c.IPv6Prefix > 128 {
		c.IPv6Prefix = 56
	}
	if c.Buckets <= 0 {
		c.Buckets = 1 << 16
	}
	if c.Clock == nil {
		start := time.Now()
		c.Clock = func() int64 { return int64(time.Since(start)) + int64(time.Hour) }
	}
	return c
}

// bucket is one entry of the table: a GCRA token bucket. tat is the time
// at which the bucket would be empty again ("theoretical arrival time"):
// a response is within the rate while tat is less than a second ahead.
type bucket struct {
	key    uint64 // the hash of the key it holds
	tat    int64
	last   int64  // when it last counted a response
	limits uint32 // limited responses, for slip
}

// stripes is how many locks the table is split under: queries from
// different networks rarely wait on each other.
const stripes = 256

// Limiter decides, response by response.
type Limiter struct {
	cfg      Config
	interval int64 // nanoseconds between responses at the rate
	seed     maphash.Seed
	buckets  []bucket
	locks    [stripes]sync.Mutex
}

// New returns a limiter with cfg's limits.
func New(cfg Config) *Limiter {
	cfg = cfg.withDefaults()
	return &Limiter{cfg: cfg, interval: int64(time.Second) / int64(cfg.Rate), seed: maphash.MakeSeed(),
		buckets: make([]bucket, cfg.Buckets)}
}

// Config returns the limits, defaults filled in.
func (l *Limiter) Config() Config { return l.cfg }

// Network returns the client network addr belongs to, for the key.
func (l *Limiter) Network(addr netip.Addr) netip.Prefix {
	addr = addr.Unmap()
	bits := l.cfg.IPv6Prefix
	if addr.Is4() {
		bits = l.cfg.IPv4Prefix
	}
	p, _ := addr.Prefix(bits)
	return p
}

// Exempt reports whether addr is in an exempt network.
func (l *Limiter) Exempt(addr netip.Addr) bool {
	addr = addr.Unmap()
	for _, p := range l.cfg.Exempt {
		if p.Contains(addr) {
			return true
		}
	}
	return false
}

// Decide counts a response of kind k to a client at addr and says what to
// do with it. name is the key's name: the query's name and qtype its type
// for an Answer, the zone's name for NXDomain, NoData and Referral, unused
// for Error. name is compared as given: the caller lowercases it.
func (l *Limiter) Decide(addr netip.Addr, k Kind, name string, qtype uint16) Action {
	return l.DecideSubject(addr, l.Subject(k, name, qtype))
}

// Subject is what Decide keys a response by, apart from the client's
// network: its kind, and the name and type that kind is counted by. A
// caller that sends one response many times (a kept answer, written
// again) computes it once and decides with DecideSubject.
func (l *Limiter) Subject(k Kind, name string, qtype uint16) uint64 {
	var h maphash.Hash
	h.SetSeed(l.seed)
	var head [3]byte
	head[0] = byte(k)
	binary.BigEndian.PutUint16(head[1:], qtype)
	h.Write(head[:])
	if k != Error {
		h.WriteString(name)
	}
	return h.Sum64()
}

// DecideSubject is Decide for a response whose Subject is subject.
func (l *Limiter) DecideSubject(addr netip.Addr, subject uint64) Action {
	if l.Exempt(addr) {
		return Send
	}
	h := l.hash(l.Network(addr), subject)
	now := l.cfg.Clock()
	i := h % uint64(len(l.buckets))
	mu := &l.locks[i%stripes]
	mu.Lock()
	defer mu.Unlock()
	b := &l.buckets[i]
	if b.key != h {
		if now-b.last < int64(time.Second) && b.last != 0 {
			// Taken by a key still counting: shared, as in Knot's table.
		} else {
			*b = bucket{key: h}
		}
	}
	b.last = now
	tat := max(b.tat, now)
	if tat-now >= int64(time.Second) {
		b.limits++
		if l.cfg.Slip > 0 && b.limits%uint32(l.cfg.Slip) == 0 {
			return Slip
		}
		return Drop
	}
	b.tat = tat + l.interval
	return Send
}

func (l *Limiter) hash(net netip.Prefix, subject uint64) uint64 {
	var h maphash.Hash
	h.SetSeed(l.seed)
	var b [16 + 1 + 8]byte
	a := net.Addr().As16()
	copy(b[:], a[:])
	b[16] = byte(net.Bits())
	binary.BigEndian.PutUint64(b[17:], subject)
	h.Write(b[:])
	return h.Sum64()
}
