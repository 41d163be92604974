//go:build !linux

package codel

import (
	"errors"
	"net"
	"net/netip"
)

func sharedSocket(netip.AddrPort) (*net.UDPConn, error) {
	return nil, errors.New("reading CoreDNS's socket is only done on Linux")
}
