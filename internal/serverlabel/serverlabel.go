// Package serverlabel names a server block as CoreDNS's own metrics name
// it (the "server" label, "dns://:53", "dns://[::1]:53"), for plugins that
// label their metrics at setup, before any query carries the name.
package serverlabel

import (
	"net"

	"github.com/coredns/coredns/core/dnsserver"
)

// Of returns the label of cfg's first listener.
func Of(cfg *dnsserver.Config) string {
	host := ""
	if len(cfg.ListenHosts) > 0 {
		host = cfg.ListenHosts[0]
	}
	return cfg.Transport + "://" + net.JoinHostPort(host, cfg.Port)
}
