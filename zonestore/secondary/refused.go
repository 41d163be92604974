package secondary

import (
	"errors"

	"github.com/miekg/dns"
)

// A server is ready (the ready plugin) once every secondary zone is
// loaded: a new server whose primaries are down does not take traffic it
// would answer SERVFAIL, nor does a rolling update replace a fleet that
// serves its zones with one that cannot. But a zone its primaries answer
// they do not serve (REFUSED, NOTAUTH: a catalog's member added before
// the primary has it, a zone dropped there) will not load by waiting,
// and held the server unready for good, one member among a catalog's
// 100,000. Such a zone is refused: it counts as settled for readiness,
// and is answered SERVFAIL, counted as a catalog's pending member, and
// tried again at its retry interval as before.

// rcodeError is an error rcode a primary answered a query of the zone's
// with.
type rcodeError struct{ rcode int }

func (e rcodeError) Error() string { return dns.RcodeToString[e.rcode] }

// refusal reports whether err is a primary's answer that it does not
// serve the zone, or will not give it to this server.
func refusal(err error) bool {
	var r rcodeError
	return errors.As(err, &r) && (r.rcode == dns.RcodeRefused || r.rcode == dns.RcodeNotAuth)
}

// Refused reports whether the zone holds no version and every primary
// refused its last refresh (refusal): waiting will not load it.
func (s *Zone) Refused() bool { return s.refused.Load() }
