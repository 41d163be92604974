// Package cmsg finds a control message among those a receive wrote
// (struct cmsghdr, as CMSG_NXTHDR walks them), in place: the kernel's
// receive stamp (internal/rxstamp), the address a datagram came to
// (plugin/codel). x/sys/unix's ParseSocketControlMessage allocates a
// slice of them for every datagram.
package cmsg

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// Find returns the data of the first control message in oob of level
// level and type typ, or false where there is none before the end or a
// header that cannot be one.
func Find(oob []byte, level, typ int32) ([]byte, bool) {
	for len(oob) >= unix.SizeofCmsghdr {
		h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
		n := int(h.Len)
		if n < unix.SizeofCmsghdr || n > len(oob) {
			return nil, false
		}
		if h.Level == level && h.Type == typ {
			return oob[unix.CmsgLen(0):n], true
		}
		oob = oob[min(unix.CmsgSpace(n-unix.SizeofCmsghdr), len(oob)):]
	}
	return nil, false
}
