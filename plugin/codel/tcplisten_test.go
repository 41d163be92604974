package codel

import (
	"bufio"
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"
)

// TestBufConnHoldsABatchAndNothingElse serves a connection as miekg/dns's
// loop does (read a length, read the message, write an answer) through a
// bufConn: 30 messages the client wrote at once get their answers in two
// writes where answers may be held (coalesce), in 30 where not; and an
// answer written from another goroutine while the loop waits for the
// client goes out at once, held or not.
func TestBufConnHoldsABatchAndNothingElse(t *testing.T) {
	for _, coalesce := range []bool{true, false} {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		client, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		raw, err := ln.Accept()
		ln.Close()
		if err != nil {
			t.Fatal(err)
		}
		c := &bufConn{TCPConn: raw.(*net.TCPConn), r: bufio.NewReaderSize(raw, tcpBuffer), coalesce: coalesce}
		const n = 30
		var batch []byte
		for i := range n {
			batch = append(batch, 0, 3, 'q', 'q', byte(i))
		}
		if _, err := client.Write(batch); err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		go func() {
			for range n {
				var l [2]byte
				if _, err := io.ReadFull(c, l[:]); err != nil {
					served <- err
					return
				}
				m := make([]byte, binary.BigEndian.Uint16(l[:]))
				if _, err := io.ReadFull(c, m); err != nil {
					served <- err
					return
				}
				m[0] = 'a'
				c.Write(append(l[:], m...))
			}
			served <- nil
			var l [2]byte
			io.ReadFull(c, l[:]) // waits for the client, which sends nothing
		}()
		client.SetReadDeadline(time.Now().Add(5 * time.Second))
		got := make([]byte, 5*n)
		if _, err := io.ReadFull(client, got); err != nil {
			t.Fatalf("coalesce %v: %v", coalesce, err)
		}
		for i := range n {
			if a := got[5*i:][:5]; a[2] != 'a' || a[4] != byte(i) {
				t.Fatalf("coalesce %v: answer %d is %q", coalesce, i, a)
			}
		}
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		c.mu.Lock()
		writes := c.writes
		c.mu.Unlock()
		if want := map[bool]int{true: 2, false: n}[coalesce]; writes != want {
			t.Errorf("coalesce %v: %d answers in %d writes, want %d", coalesce, n, writes, want)
		}
		// The loop waits for the client now: an answer from elsewhere
		// goes out at once.
		time.Sleep(20 * time.Millisecond)
		c.Write([]byte{0, 3, 'a', 'a', 'z'})
		late := make([]byte, 5)
		if _, err := io.ReadFull(client, late); err != nil || late[4] != 'z' {
			t.Fatalf("coalesce %v: an answer written while the loop waited: %q, %v", coalesce, late, err)
		}
		client.Close()
		c.Close()
	}
}
