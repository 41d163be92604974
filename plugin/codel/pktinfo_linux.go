//go:build linux

package codel

import (
	"encoding/binary"
	"net/netip"

	"golang.org/x/sys/unix"

	"github.com/ontimedns/ontime/internal/cmsg"
)

// On a socket bound to every address each query's control messages say
// the address it came to, and each answer's say the address it goes out
// from. Both are read and written here in place: x/net's ipv4 and ipv6
// ControlMessage parsed each query's into three allocations and marshaled
// each answer's into two more, and a server bound to no address (a
// Corefile without bind, CoreDNS's default) answered 0.82x the queries a
// second of one bound to its address (bench/README.md, 2026-12-06).

// destination returns the address a query was sent to, from its
// IPV6_PKTINFO or IP_PKTINFO control message (an IPv4 address unmapped),
// or the zero Addr where it has neither.
func destination(oob []byte) netip.Addr {
	if pi, ok := cmsg.Find(oob, unix.IPPROTO_IPV6, unix.IPV6_PKTINFO); ok && len(pi) >= unix.SizeofInet6Pktinfo {
		return netip.AddrFrom16([16]byte(pi[:16])).Unmap() // in6_pktinfo's ipi6_addr
	}
	if pi, ok := cmsg.Find(oob, unix.IPPROTO_IP, unix.IP_PKTINFO); ok && len(pi) >= unix.SizeofInet4Pktinfo {
		return netip.AddrFrom4([4]byte(pi[8:12])) // in_pktinfo's ipi_addr, the header's destination
	}
	return netip.Addr{}
}

// appendSource appends to b the control message that sends an answer from
// src: IP_PKTINFO for an IPv4 address (an IPv6 socket takes it for an
// IPv4 client too), IPV6_PKTINFO for an IPv6 one; nothing for no address.
func appendSource(b []byte, src netip.Addr) []byte {
	switch {
	case src.Is4():
		b = appendCmsgHeader(b, unix.IPPROTO_IP, unix.IP_PKTINFO, unix.SizeofInet4Pktinfo)
		a := src.As4()
		b = append(b, 0, 0, 0, 0) // ipi_ifindex: any
		b = append(b, a[:]...)    // ipi_spec_dst: the source
		b = append(b, 0, 0, 0, 0) // ipi_addr: unused in a send
		return appendCmsgPadding(b, unix.SizeofInet4Pktinfo)
	case src.Is6():
		b = appendCmsgHeader(b, unix.IPPROTO_IPV6, unix.IPV6_PKTINFO, unix.SizeofInet6Pktinfo)
		a := src.As16()
		b = append(b, a[:]...)    // ipi6_addr: the source
		b = append(b, 0, 0, 0, 0) // ipi6_ifindex: any
		return appendCmsgPadding(b, unix.SizeofInet6Pktinfo)
	}
	return b
}

// appendCmsgHeader appends a struct cmsghdr for data of n octets.
func appendCmsgHeader(b []byte, level, typ int32, n int) []byte {
	b = binary.NativeEndian.AppendUint64(b, uint64(unix.CmsgLen(n)))
	b = binary.NativeEndian.AppendUint32(b, uint32(level))
	return binary.NativeEndian.AppendUint32(b, uint32(typ))
}

// appendCmsgPadding pads a control message of n octets of data to its
// space (CMSG_SPACE).
func appendCmsgPadding(b []byte, n int) []byte {
	for range unix.CmsgSpace(n) - unix.CmsgLen(n) {
		b = append(b, 0)
	}
	return b
}
