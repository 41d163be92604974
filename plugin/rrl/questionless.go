package rrl

import (
	"github.com/miekg/dns"
)

// AnswerQuestionless answers a request for a server cookie: a query of no
// question with a COOKIE option (RFC 7873 section 5.4), which codel hands
// here before any chain runs, having no name to choose one by. The answer
// has no records and the client cookie with a fresh server cookie; its
// rcode is NOERROR, or BADCOOKIE where the request returned a server
// cookie that is not valid for it. Any other message of no question, a
// COOKIE option of no cookie's length included, is left to codel, which
// answers FORMERR, as a server without cookies does.
//
// It is never rate limited: its answer is the query's size and 16 octets
// more (the server cookie), as a BADCOOKIE answer in place of a limited
// one is, and no larger whatever the zones hold.
func (h *RRL) AnswerQuestionless(w dns.ResponseWriter, r *dns.Msg) bool {
	opt := r.IsEdns0()
	if r.Opcode != dns.OpcodeQuery || opt == nil || opt.Version() != 0 {
		return false
	}
	client, server, ok := cookieOf(r)
	if !ok || client == nil {
		return false
	}
	addr, _ := clientOf(w)
	m := new(dns.Msg)
	m.SetReply(r)
	m.CheckingDisabled = false // as every answer's (RFC 4035 section 3.1.6)
	if server != nil && !h.cookies.Valid(client, server, addr) {
		m.Rcode = dns.RcodeBadCookie
	}
	m.SetEdns0(opt.UDPSize(), opt.Do())
	m.IsEdns0().Option = []dns.EDNS0{h.freshCookie(client, addr)}
	w.WriteMsg(m)
	return true
}
