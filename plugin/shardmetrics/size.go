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
		n += dns.Len(opt)
	}
	return n
}
