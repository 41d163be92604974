//go:build !linux

package codel

import (
	"errors"
	"net"
	"net/netip"
)

func openSockets(netip.AddrPort, bool) (conn, feed *net.UDPConn, undo, forget func(), err error) {
	return nil, nil, nil, nil, errors.New("reading CoreDNS's socket is only done on Linux")
}
