package zonestore

import (
	"net"
	"strings"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
	"github.com/ontimedns/ontime/zonestore/secondary"
)

// addSecondary adds a zone kept by transfers from its primaries.
func (h *Handler) addSecondary(cfg secondary.Config) {
	origin := cfg.Origin
	cfg.Logf = log.Warningf
	cfg.Events = func(kind string, z *zonestore.Zone, err error) {
		switch {
		case err != nil:
			transfers.WithLabelValues(origin, kind, "failed").Inc()
			loadFailures.WithLabelValues(origin).Inc()
			log.Errorf("Transfer (%s) of zone %q failed, %s: %v", kind, origin, keeping(h.store.Get(origin)), err)
		case z != nil:
			transfers.WithLabelValues(origin, kind, "published").Inc()
			h.published(z)
			log.Infof("Transferred zone %q (%s): serial %d, generation %d", origin, kind, z.Serial(), z.Generation())
		default:
			transfers.WithLabelValues(origin, kind, "current").Inc()
		}
	}
	if h.secondaries == nil {
		h.secondaries = map[string]*secondary.Zone{}
	}
	h.secondaries[origin] = secondary.New(cfg)
}

// notify answers a NOTIFY (RFC 1996) for a secondary zone: from one of its
// primaries, it is acknowledged and the zone refreshed at once; from
// anyone else, it is refused, logged and counted.
func (h *Handler) notify(w dns.ResponseWriter, r *dns.Msg, sec *secondary.Zone) (int, error) {
	var ip net.IP
	switch a := w.RemoteAddr().(type) {
	case *net.UDPAddr:
		ip = a.IP
	case *net.TCPAddr:
		ip = a.IP
	}
	if !sec.IsPrimary(ip) {
		notifies.WithLabelValues(sec.Origin(), "refused").Inc()
		log.Warningf("NOTIFY for %q from %s, not one of its primaries: refused", sec.Origin(), ip)
		return h.reply(w, r, dns.RcodeRefused)
	}
	notifies.WithLabelValues(sec.Origin(), "accepted").Inc()
	m := new(dns.Msg)
	m.SetReply(r)
	m.Authoritative = true
	w.WriteMsg(m)
	sec.Notify()
	return dns.RcodeSuccess, nil
}

// pendingSecondary returns the secondary zone qname falls in, if it has
// not been transferred yet: such a query gets SERVFAIL, not a referral
// elsewhere.
func (h *Handler) pendingSecondary(qname string) *secondary.Zone {
	for origin, sec := range h.secondaries {
		if plugin.Name(origin).Matches(strings.ToLower(qname)) && !sec.Loaded() {
			return sec
		}
	}
	return nil
}
