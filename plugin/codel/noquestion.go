package codel

import (
	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"
)

// A message of no question is answered here, before any plugin: CoreDNS's
// server routes a query to a server block by its question's name, and
// answers one without a question SERVFAIL itself. One such message is a
// query all the same: a request for a server cookie (RFC 7873 section
// 5.4), a COOKIE option and nothing else, which a server with cookies
// answers with one. The plugin that makes the server's cookies (rrl)
// answers it through this interface, which codel finds among the
// plugins of the server blocks on its socket.

// questionless is a plugin that answers some messages of no question: it
// answers r and reports true, or leaves it to codel and reports false.
type questionless interface {
	AnswerQuestionless(w dns.ResponseWriter, r *dns.Msg) bool
}

// questionlessOf returns the plugin of the server blocks that answers
// messages of no question (chooseQuestionless).
func questionlessOf(configs []*dnsserver.Config) questionless {
	blocks := make([]block, len(configs))
	for i, c := range configs {
		blocks[i] = block{c.Zone, c.Handlers()}
	}
	return chooseQuestionless(blocks)
}

// block is a server block's zone and plugins.
type block struct {
	zone     string
	handlers []plugin.Handler
}

// chooseQuestionless returns the root block's answerer where the server
// has one (the usual ".:53 { ... }"), or the one answerer among all
// blocks; nil where there is none, or more than one and none in the
// root's block, for want of a name to choose a block by.
func chooseQuestionless(blocks []block) questionless {
	var found, root questionless
	many := false
	for _, b := range blocks {
		for _, h := range b.handlers {
			q, ok := h.(questionless)
			if !ok {
				continue
			}
			if b.zone == "." && root == nil {
				root = q
			}
			many = many || (found != nil && found != q)
			found = q
		}
	}
	switch {
	case root != nil:
		return root
	case many:
		return nil
	}
	return found
}

// noQuestion answers r, a message of no question, if it is one: through
// q where q answers it; else FORMERR with its ID and RD, as miekg/dns's
// server answers it, and an OPT record where r has one, as Knot's answer
// has and RFC 6891 section 6.1.1 has every answer to a request with an
// OPT record carry. CoreDNS's server would answer SERVFAIL.
func noQuestion(w dns.ResponseWriter, r *dns.Msg, q questionless) bool {
	if len(r.Question) != 0 {
		return false
	}
	if q != nil && q.AnswerQuestionless(w, r) {
		return true
	}
	m := new(dns.Msg)
	m.SetRcodeFormatError(r)
	m.RecursionDesired = r.RecursionDesired // as the refusals in serve
	if o := r.IsEdns0(); o != nil {
		m.SetEdns0(o.UDPSize(), o.Do()) // version 0, and no option: none is answered here
	}
	w.WriteMsg(m)
	return true
}
