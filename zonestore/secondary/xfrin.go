package secondary

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// miekg/dns's Transfer reads each message of a transfer into a buffer of
// 64 kB (MaxMsgSize) made for it. A catalog member's whole transfer is
// one message of a few hundred octets, so 100,000 members' transfers
// made 6.4 GB of buffers for the collector: in a profile of 20,000
// members transferring, its makeslice took 21% of the samples, with the
// collector's assists it brought on. Read into a buffer of each
// message's own length instead (dns.Conn.ReadMsgHeader), they were
// transferred 1.7 times as fast, but a few hundred octets a member,
// freed at once among the zones' records, left holes in their spans:
// 7% more memory a record. xfrIn reads every message into one of a few
// 64 kB buffers, taken from a pool for the transfer and given back after
// it (the records are unpacked out of the buffer, never into it: miekg's
// server reuses its buffers so too), and otherwise does as Transfer.In
// does: the query signed with the zone's key, each
// message's signature verified (its timers alone after the first, RFC
// 8945 section 5.3.1) against the MAC before it, and the transfer's end
// told by its SOA records. It reads on the caller's goroutine, where
// Transfer.In hands each message over a channel from one of its own.

// xfrIn is one AXFR or IXFR under way from a primary.
type xfrIn struct {
	conn *dns.Conn
	buf  *[]byte // from buffers, for the transfer's messages
	q    *dns.Msg
	key  *TSIG
	mac  string // the MAC the next message's signature covers: the query's, then each message's

	msgs   int    // messages read
	serial uint32 // the primary's serial: the first SOA's
	soas   int    // SOA records of that serial seen (IXFR)
	diffs  bool   // an IXFR answered with differences, not the whole zone

	expire expireOption // the EXPIRE of the last message that had one (expire.go)
}

// startTransfer sends q (an AXFR or IXFR question) over conn, signed with
// key if there is one.
func startTransfer(conn *dns.Conn, q *dns.Msg, key *TSIG, timeout time.Duration) (*xfrIn, error) {
	x := &xfrIn{conn: conn, buf: buffers.Get().(*[]byte), q: q, key: key}
	wire, err := x.sign(q)
	if err == nil {
		conn.SetWriteDeadline(time.Now().Add(timeout))
		_, err = conn.Write(wire)
	}
	if err != nil {
		x.close()
		return nil, err
	}
	return x, nil
}

// buffers hold a message of a transfer each, one for each transfer under
// way.
var buffers = sync.Pool{New: func() any { b := make([]byte, dns.MaxMsgSize); return &b }}

// sign packs q, with a TSIG record made with the key, and notes its MAC.
func (x *xfrIn) sign(q *dns.Msg) ([]byte, error) {
	if x.key == nil {
		return q.Pack()
	}
	// A transfer run again (over a new connection) is signed afresh.
	q.Extra = slices.DeleteFunc(q.Extra, func(rr dns.RR) bool { return rr.Header().Rrtype == dns.TypeTSIG })
	x.key.stamp(q)
	wire, mac, err := dns.TsigGenerate(q, x.key.Secret, "", false)
	x.mac = mac
	return wire, err
}

func (x *xfrIn) close() {
	x.conn.Close()
	buffers.Put(x.buf)
}

// keep gives the connection, at the clean end of the transfer, to idle
// for the next transfer from primary.
func (x *xfrIn) keep(primary string) {
	idle.put(primary, x.conn)
	buffers.Put(x.buf)
}

// next reads the next message of the transfer: its answer's records, and
// whether it is the last.
func (x *xfrIn) next() ([]dns.RR, bool, error) {
	var size [2]byte
	if _, err := io.ReadFull(x.conn.Conn, size[:]); err != nil { // the stream itself: dns.Conn.Read reads a message
		return nil, false, err
	}
	wire := (*x.buf)[:binary.BigEndian.Uint16(size[:])]
	if _, err := io.ReadFull(x.conn.Conn, wire); err != nil {
		return nil, false, err
	}
	m := new(dns.Msg)
	if err := m.Unpack(wire); err != nil {
		return nil, false, err
	}
	if x.key != nil {
		sig := m.IsTsig()
		if sig == nil && m.Rcode != dns.RcodeSuccess { // a refusal of the query's key is not signed (RFC 8945 section 5.3.2)
			x.msgs++ // an answer all the same
			return nil, false, fmt.Errorf("the primary answered %w, unsigned", rcodeError{m.Rcode})
		}
		// After the first message, a signature covers the timers alone
		// (with the MAC before it and the message).
		if err := dns.TsigVerify(wire, x.key.Secret, x.mac, x.msgs > 0); err != nil {
			return nil, false, fmt.Errorf("TSIG of message %d: %w", x.msgs+1, err)
		}
		if sig != nil {
			x.mac = sig.MAC
		}
	}
	x.msgs++
	if e := answeredExpire(m); e.given {
		x.expire = e
	}
	switch {
	case m.Id != x.q.Id:
		return nil, false, dns.ErrId
	case m.Rcode != dns.RcodeSuccess:
		return nil, false, fmt.Errorf("the primary answered %w", rcodeError{m.Rcode})
	}
	if x.msgs == 1 {
		soa, ok := firstSOA(m.Answer)
		if !ok {
			return nil, false, errors.New("the transfer does not start with an SOA")
		}
		x.serial = soa.Serial
	}
	if x.q.Question[0].Qtype == dns.TypeIXFR {
		return m.Answer, x.ixfrEnds(m.Answer), nil
	}
	// An AXFR ends with a message whose last record is the SOA, past the
	// first SOA (which a message may hold alone).
	last := len(m.Answer) > 0 && m.Answer[len(m.Answer)-1].Header().Rrtype == dns.TypeSOA
	return m.Answer, last && !(x.msgs == 1 && len(m.Answer) == 1), nil
}

// ixfrEnds reports whether an IXFR answer ends with these records (RFC
// 1995 section 4): at once where the primary's serial is not newer than
// the one asked from (the SOA alone); else with the second SOA of the
// primary's serial where it sends the whole zone, or the third where it
// sends differences (the first, the last difference's additions, the
// end).
func (x *xfrIn) ixfrEnds(rrs []dns.RR) bool {
	asked := x.q.Ns[0].(*dns.SOA).Serial
	if x.msgs == 1 && !zonestore.SerialNewer(x.serial, asked) {
		return true
	}
	for _, rr := range rrs {
		soa, ok := rr.(*dns.SOA)
		if !ok {
			continue
		}
		if soa.Serial != x.serial {
			x.diffs = true
			continue
		}
		x.soas++
		if (x.soas == 2 && !x.diffs) || x.soas == 3 {
			return true
		}
	}
	return false
}

func firstSOA(rrs []dns.RR) (*dns.SOA, bool) {
	if len(rrs) == 0 {
		return nil, false
	}
	soa, ok := rrs[0].(*dns.SOA)
	return soa, ok
}
