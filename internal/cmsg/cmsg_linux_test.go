package cmsg

import (
	"bytes"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// TestFindWalksTheMessages: of two control messages, the second is found
// by its level and type, its data whole; one not there, one behind a
// header whose length runs past the buffer or is shorter than a header,
// and an empty buffer, are not.
func TestFindWalksTheMessages(t *testing.T) {
	oob := append(unix.PktInfo4(&unix.Inet4Pktinfo{Ifindex: 7}), unix.UnixRights(3, 4)...)
	data, ok := Find(oob, unix.SOL_SOCKET, unix.SCM_RIGHTS)
	if !ok || !bytes.Equal(data, []byte{3, 0, 0, 0, 4, 0, 0, 0}) {
		t.Fatalf("SCM_RIGHTS: %v, %v", data, ok)
	}
	if data, ok := Find(oob, unix.IPPROTO_IP, unix.IP_PKTINFO); !ok || len(data) != unix.SizeofInet4Pktinfo || data[0] != 7 {
		t.Fatalf("IP_PKTINFO: %v, %v", data, ok)
	}
	if _, ok := Find(oob, unix.IPPROTO_IPV6, unix.IPV6_PKTINFO); ok {
		t.Fatal("found a message that is not there")
	}
	for _, n := range []int{len(oob) + 1, unix.SizeofCmsghdr - 1} {
		bad := append([]byte{}, oob...)
		(*unix.Cmsghdr)(unsafe.Pointer(&bad[0])).SetLen(n)
		if _, ok := Find(bad, unix.SOL_SOCKET, unix.SCM_RIGHTS); ok {
			t.Fatalf("found a message behind a header of length %d", n)
		}
	}
	if _, ok := Find(nil, unix.SOL_SOCKET, unix.SCM_RIGHTS); ok {
		t.Fatal("found a message in no buffer")
	}
}
