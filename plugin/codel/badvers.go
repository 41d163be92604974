package codel

import (
	"github.com/coredns/coredns/plugin/pkg/edns"
	"github.com/miekg/dns"
)

// badVersion answers r where its EDNS version is one this server does not
// speak, as CoreDNS's server answers it before any plugin (BADVERS, RFC
// 6891 section 6.1.3, with an OPT record of version 0), but for CD, which
// its reply copies and an authoritative answer clears (RFC 4035 section
// 3.1.6), as Knot's does. It reports whether it answered.
func badVersion(w dns.ResponseWriter, r *dns.Msg) bool {
	m, err := edns.Version(r)
	if err == nil {
		return false
	}
	m.CheckingDisabled = false
	w.WriteMsg(m)
	return true
}
