package codel

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/ahead"
)

// tcpPair returns the two ends of a TCP connection on 127.0.0.1: the
// client's, and the server's.
func tcpPair(t *testing.T) (net.Conn, *net.TCPConn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	raw, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	return client, raw.(*net.TCPConn)
}

// TestBufConnHoldsABatchAndNothingElse serves a connection as miekg/dns's
// loop does (read a length, read the message, write an answer) through a
// bufConn: 30 messages the client wrote at once get their answers in one
// write where answers may be held (coalesce), in 30 where not; none of
// them, the last one's included, reaches the client before the loop comes
// back to read (so an answer is kept by replay before a client sees it);
// and an answer written from another goroutine while the loop waits for
// the client goes out at once, held or not.
func TestBufConnHoldsABatchAndNothingElse(t *testing.T) {
	for _, coalesce := range []bool{true, false} {
		client, raw := tcpPair(t)
		c := &bufConn{TCPConn: raw, r: bufio.NewReaderSize(raw, tcpBuffer), coalesce: coalesce}
		const n = 30
		var batch []byte
		for i := range n {
			batch = append(batch, 0, 3, 'q', 'q', byte(i))
		}
		if _, err := client.Write(batch); err != nil {
			t.Fatal(err)
		}
		served := make(chan error, 1)
		readAgain := make(chan struct{})
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
			<-readAgain
			var l [2]byte
			io.ReadFull(c, l[:]) // waits for the client, which sends nothing
		}()
		if err := <-served; err != nil {
			t.Fatal(err)
		}
		// Every query served, the loop not back yet: held, nothing sent.
		client.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
		got := make([]byte, 5*n)
		k, _ := io.ReadFull(client, got)
		if held := k == 0; held != coalesce {
			t.Fatalf("coalesce %v: %d octets reached the client before the loop read again", coalesce, k)
		}
		close(readAgain)
		client.SetReadDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.ReadFull(client, got[k:]); err != nil {
			t.Fatalf("coalesce %v: %v", coalesce, err)
		}
		for i := range n {
			if a := got[5*i:][:5]; a[2] != 'a' || a[4] != byte(i) {
				t.Fatalf("coalesce %v: answer %d is %q", coalesce, i, a)
			}
		}
		c.mu.Lock()
		writes := c.writes
		c.mu.Unlock()
		if want := map[bool]int{true: 1, false: n}[coalesce]; writes != want {
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

// questions is a Warmer that notes the questions it is handed, in order,
// and is done with each at its second step.
type questions struct{ seen []string }

func (q *questions) Warm(note *ahead.Note, question []byte) {
	if note.Step == 0 {
		q.seen = append(q.seen, string(question))
		note.Step = 1
		return
	}
	note.Step = ahead.Done
}

// TestBufConnWarmsTheQueriesOfARead: the read that brings a batch hands the
// Warmer the question of each query in it (the first, whose length the
// loop has just read, and those after it), but a message of two questions,
// and none past the end of what was read; a read that brings one query
// warms nothing.
func TestBufConnWarmsTheQueriesOfARead(t *testing.T) {
	client, raw := tcpPair(t)
	defer client.Close()
	w := &questions{}
	c := &bufConn{TCPConn: raw, r: bufio.NewReaderSize(raw, tcpBuffer), warmer: w}
	defer c.Close()
	framed := func(names ...string) []byte {
		m := new(dns.Msg)
		for _, n := range names {
			m.Question = append(m.Question, dns.Question{Name: n, Qtype: dns.TypeA, Qclass: dns.ClassINET})
		}
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return append(binary.BigEndian.AppendUint16(nil, uint16(len(b))), b...)
	}
	question := func(name string) string {
		b := make([]byte, 256)
		n, _ := dns.PackDomainName(name, b, 0, nil, false)
		return string(b[:n]) + "\x00\x01\x00\x01"
	}
	var batch []byte
	for _, n := range [][]string{{"a.example."}, {"b.example."}, {"c.example.", "d.example."}, {"e.example."}} {
		batch = append(batch, framed(n...)...)
	}
	batch = append(batch, framed("f.example.")[:9]...) // its length and part of it: not read whole
	client.Write(batch)
	var l [2]byte
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, l[:]); err != nil {
		t.Fatal(err)
	}
	want := []string{question("a.example."), question("b.example."), question("e.example.")}
	if fmt.Sprint(w.seen) != fmt.Sprint(want) {
		t.Fatalf("warmed %q, want %q", w.seen, want)
	}
	// The rest of the batch, read from the buffer, warms nothing more;
	// then one query alone warms nothing.
	if _, err := io.ReadFull(c, make([]byte, len(batch)-2)); err != nil {
		t.Fatal(err)
	}
	if c.r.Buffered() != 0 {
		t.Fatalf("%d octets left in the buffer", c.r.Buffered())
	}
	w.seen = nil
	client.Write(framed("g.example."))
	if _, err := io.ReadFull(c, l[:]); err != nil {
		t.Fatal(err)
	}
	if len(w.seen) != 0 {
		t.Fatalf("one query alone warmed %q", w.seen)
	}
}

// TestBufConnTimesOutAsTheLastDeadlineSays: deadlines set while the next
// message is in the buffer are kept, not given to the connection, yet the
// read that waits for the client times out at the last one set; and one
// set while a read waits (a shutdown's, in the past) ends it at once.
func TestBufConnTimesOutAsTheLastDeadlineSays(t *testing.T) {
	client, raw := tcpPair(t)
	defer client.Close()
	c := &bufConn{TCPConn: raw, r: bufio.NewReaderSize(raw, tcpBuffer)}
	defer c.Close()
	if _, err := client.Write([]byte{0, 1, 'a', 0, 1, 'b'}); err != nil {
		t.Fatal(err)
	}
	// readWithin reads once more, waiting 3 s at most for the read to end.
	readWithin := func() (time.Duration, error) {
		start := time.Now()
		done := make(chan error, 1)
		go func() {
			var b [8]byte
			_, err := c.Read(b[:])
			done <- err
		}()
		select {
		case err := <-done:
			return time.Since(start), err
		case <-time.After(3 * time.Second):
			t.Fatal("a read still waits after 3 s")
			return 0, nil
		}
	}
	first := time.Now().Add(time.Hour)
	c.SetReadDeadline(first)
	var msg [3]byte
	if _, err := io.ReadFull(c, msg[:]); err != nil || msg[2] != 'a' {
		t.Fatalf("the first message: %q, %v", msg, err)
	}
	c.SetReadDeadline(time.Now().Add(time.Minute))
	if _, err := io.ReadFull(c, msg[:]); err != nil || msg[2] != 'b' {
		t.Fatalf("the second message: %q, %v", msg, err)
	}
	if !c.set.Equal(first) {
		t.Fatalf("the connection was given %v for a message in the buffer", c.set)
	}
	c.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if took, err := readWithin(); !errors.Is(err, os.ErrDeadlineExceeded) || took < 80*time.Millisecond {
		t.Fatalf("a read that waits for the client: %v after %v, want the deadline's error after 100 ms", err, took)
	}
	c.SetReadDeadline(time.Now().Add(time.Hour))
	go func() {
		time.Sleep(100 * time.Millisecond)
		c.SetReadDeadline(time.Unix(1, 0)) // as miekg/dns's shutdown ends reads
	}()
	if _, err := readWithin(); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("a read ended by a shutdown: %v", err)
	}
}
