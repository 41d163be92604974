package shardmetrics

import "github.com/miekg/dns"

// requestLen is r.Len(), the request size the stock plugin reports, made
// without miekg/dns's compression map for a query of one question with no
// escapes in its name (plain says so) and nothing after it but OPT
// records: nearly every query. No name in such a message can be compressed (an OPT record's owner
// is the root), so its length is the sum of its parts'.
func requestLen(r *dns.Msg, plain bool) int {
	if len(r.Question) != 1 || len(r.Answer) > 0 || len(r.Ns) > 0 || !plain {
		return r.Len()
	}
	name := r.Question[0].Name
	n := 12 + len(name) + 1 + 4 // header, name, type and class
	if name == "" || name == "." {
		n = 12 + 1 + 4
	}
	for _, rr := range r.Extra {
		opt, ok := rr.(*dns.OPT)
		if !ok {
			return r.Len()
		}
		n += optLen(opt)
	}
	return n
}

// optLen is dns.Len(o) for an OPT owned by the root with no option but
// COOKIEs of hex text (as codel's reader and miekg/dns unpack them), as
// resolvers such as BIND send with every query; dns.Len packs each option
// to measure it, decoding a cookie's text into a new slice. Anything else
// is dns.Len's.
func optLen(o *dns.OPT) int {
	if o.Hdr.Name != "." {
		return dns.Len(o)
	}
	n := 1 + 10 // the root, type, class, TTL, length
	for _, e := range o.Option {
		c, ok := e.(*dns.EDNS0_COOKIE)
		if !ok || !isHex(c.Cookie) {
			return dns.Len(o)
		}
		n += 4 + len(c.Cookie)/2
	}
	return n
}

// isHex reports whether s is hex text of whole octets, as a cookie's
// pack decodes it.
func isHex(s string) bool {
	if len(s)%2 != 0 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
