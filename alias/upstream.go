package alias

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/miekg/dns"
)

// ErrTimeout says that no upstream answered in time.
var ErrTimeout = errors.New("upstream timed out")

// exchange asks the upstreams, in order, for target's records of type t,
// each with its own timeout; a truncated answer is asked again over TCP.
// The first valid answer wins: the same ID and question, and NOERROR or
// NXDOMAIN. timedOut reports whether every failure was a timeout.
func exchange(upstreams []string, timeout time.Duration, target string, t uint16) (*dns.Msg, error) {
	q := new(dns.Msg)
	q.SetQuestion(target, t)
	q.RecursionDesired = true
	q.SetEdns0(1232, false)
	var errs []error
	timeouts := 0
	for _, addr := range upstreams {
		r, err := exchangeOne(q, addr, timeout)
		if err == nil {
			return r, nil
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			timeouts++
			err = fmt.Errorf("%s: %w", addr, ErrTimeout)
		}
		errs = append(errs, err)
	}
	if timeouts == len(upstreams) {
		return nil, fmt.Errorf("%s %s: %w", target, dns.TypeToString[t], ErrTimeout)
	}
	return nil, fmt.Errorf("%s %s: %w", target, dns.TypeToString[t], errors.Join(errs...))
}

func exchangeOne(q *dns.Msg, addr string, timeout time.Duration) (*dns.Msg, error) {
	c := dns.Client{Net: "udp", Timeout: timeout}
	r, _, err := c.Exchange(q, addr) // miekg/dns refuses an answer with another ID
	if err == nil && r.Truncated {
		c.Net = "tcp"
		r, _, err = c.Exchange(q, addr)
	}
	if err != nil {
		return nil, err
	}
	return r, valid(q, r, addr)
}

// valid checks that r answers q: a spoofed or confused answer is not used.
func valid(q, r *dns.Msg, addr string) error {
	if !r.Response || len(r.Question) != 1 {
		return fmt.Errorf("%s: not an answer to one question", addr)
	}
	want, got := q.Question[0], r.Question[0]
	if !strings.EqualFold(want.Name, got.Name) || want.Qtype != got.Qtype || want.Qclass != got.Qclass {
		return fmt.Errorf("%s: answered %s %s, asked %s %s", addr, got.Name, dns.TypeToString[got.Qtype], want.Name, dns.TypeToString[want.Qtype])
	}
	if r.Rcode != dns.RcodeSuccess && r.Rcode != dns.RcodeNameError {
		return fmt.Errorf("%s: answered %s", addr, dns.RcodeToString[r.Rcode])
	}
	return nil
}

// addresses takes from r the records of type t at the end of the CNAME
// chain that starts at target, and the smallest TTL along it. A name that
// does not exist, or has no such records, gives none: NODATA for the
// ALIAS owner, cached for the negative TTL of RFC 2308 (the SOA's MINIMUM
// or TTL, the smaller, and 0 without an SOA).
func addresses(r *dns.Msg, target string, t uint16) (rrs []dns.RR, ttl uint32) {
	name := target
	ttl = ^uint32(0)
	for hops := 0; hops < 16; hops++ {
		var next string
		for _, rr := range r.Answer {
			h := rr.Header()
			if !strings.EqualFold(h.Name, name) {
				continue
			}
			switch {
			case h.Rrtype == t:
				rrs = append(rrs, rr)
				ttl = min(ttl, h.Ttl)
			case h.Rrtype == dns.TypeCNAME && next == "":
				next = rr.(*dns.CNAME).Target
				ttl = min(ttl, h.Ttl)
			}
		}
		if len(rrs) > 0 || next == "" {
			break
		}
		name = next
	}
	if len(rrs) > 0 {
		return rrs, ttl
	}
	for _, rr := range r.Ns {
		if soa, ok := rr.(*dns.SOA); ok {
			return nil, min(ttl, soa.Hdr.Ttl, soa.Minttl)
		}
	}
	return nil, 0
}
