//go:build linux

package rxstamp

import (
	"net"
	"testing"
	"time"
)

// TestStampIsWhenTheDatagramArrived: a datagram left unread for 50 ms
// carries the kernel's stamp of its arrival, 50 ms before it was read.
func TestStampIsWhenTheDatagramArrived(t *testing.T) {
	server, err := net.ListenUDP("udp4", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer server.Close()
	raw, err := server.SyscallConn()
	if err != nil {
		t.Fatal(err)
	}
	if !Enable(raw) {
		t.Skip("the kernel does not stamp datagrams here")
	}
	client, err := net.DialUDP("udp4", nil, server.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()
	// The kernel turns stamping on for the whole stack a moment after the
	// first socket asks (deferred work); until then a datagram is stamped
	// when it is read. So: a few tries.
	var waited time.Duration
	buf, oob := make([]byte, 512), make([]byte, 128)
	for try := 0; try < 5 && waited < 45*time.Millisecond; try++ {
		if _, err := client.Write([]byte("stamped")); err != nil {
			t.Fatal(err)
		}
		time.Sleep(50 * time.Millisecond)
		server.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, oobn, _, _, err := server.ReadMsgUDP(buf, oob)
		if err != nil {
			t.Fatal(err)
		}
		read := time.Now().UnixNano()
		at, ok := Received(oob[:oobn])
		if !ok {
			t.Fatalf("no stamp among the control messages % x", oob[:oobn])
		}
		waited = time.Duration(read - at)
	}
	if waited < 45*time.Millisecond || waited > 5*time.Second {
		t.Errorf("stamped %v before it was read, want the 50 ms it waited unread", waited)
	}
}

// TestNoStampInBrokenControlMessages: control messages cut short or with a
// length past their end give no stamp, and nothing is read out of bounds.
func TestNoStampInBrokenControlMessages(t *testing.T) {
	for _, oob := range [][]byte{
		nil,
		{1, 2, 3},
		{0xff, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 35, 0, 0, 0}, // a length of 255 in 16 octets
		{8, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 35, 0, 0, 0},    // shorter than its header
	} {
		if at, ok := Received(oob); ok {
			t.Errorf("% x: stamp %d, want none", oob, at)
		}
	}
}
