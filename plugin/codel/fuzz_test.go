package codel

import (
	"encoding/binary"
	"net"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
	_ "github.com/ontimedns/ontime/plugin/rrl"
)

// checkingSink is the socket's place in the fuzz target: every answer
// written must be a DNS message, a response, with the query's ID.
type checkingSink struct {
	t  *testing.T
	id uint16
}

func (c checkingSink) LocalAddr() net.Addr  { return local }
func (c checkingSink) RemoteAddr() net.Addr { return remote }
func (c checkingSink) WriteMsg(m *dns.Msg) error {
	b, err := m.Pack()
	if err != nil {
		return err
	}
	_, err = c.Write(b)
	return err
}
func (c checkingSink) Write(b []byte) (int, error) {
	m := new(dns.Msg)
	if err := m.Unpack(b); err != nil {
		c.t.Fatalf("the chain wrote %d octets that do not unpack: %v", len(b), err)
	}
	if !m.Response || m.Id != c.id {
		c.t.Fatalf("the chain wrote a message with QR %v and ID %d to a query with ID %d", m.Response, m.Id, c.id)
	}
	return len(b), nil
}
func (checkingSink) Close() error        { return nil }
func (checkingSink) TsigStatus() error   { return nil }
func (checkingSink) TsigTimersOnly(bool) {}
func (checkingSink) Hijack()             {}

// FuzzPacketThroughTheChain sends arbitrary datagrams in where codel's
// socket reader hands them over, through the whole chain as the binary
// runs it (prometheus, codel, rrl with its cookies, fastpack, zonestore on
// the load test's zone; rrl answers a request for a server cookie of no
// question): no input may panic, and whatever is answered is a well-formed
// response with the query's ID (FORMERR, or an answer), or nothing.
//
//	go test -run XXX -fuzz FuzzPacketThroughTheChain -fuzztime 30s ./plugin/codel/
func FuzzPacketThroughTheChain(f *testing.F) {
	template, packed := chainServer(f, " prometheus 127.0.0.1:0\n codel\n rrl\n fastpack\n", false)
	if template.questionless == nil {
		f.Fatal("the reader found no answerer of messages of no question: rrl is in the chain")
	}
	for _, p := range packed[:40] {
		f.Add(p)
	}
	for _, cookie := range []string{"0102030405060708", "0102030405060708" + "0100000065f0f0f0" + "0011223344556677", "01"} {
		m := new(dns.Msg)
		m.SetQuestion(workload.Origin, dns.TypeSOA)
		m.SetEdns0(1232, false)
		m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: cookie})
		if b, err := m.Pack(); err == nil {
			f.Add(b) // a client cookie, a client and server cookie, one cut short
		}
		m.Question = nil
		if b, err := m.Pack(); err == nil {
			f.Add(b) // the same with no question: a request for a server cookie (rrl's AnswerQuestionless)
		}
	}
	f.Add([]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 3, 'w'})           // a question cut short
	f.Add([]byte{0, 2, 0x80, 0, 0, 1, 0, 0, 0, 0, 0, 0})                // a response
	f.Add([]byte{0, 3, 0x28, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 1}) // an UPDATE
	room := new(nameRoom)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 12 {
			return // the reader drops these before the queue
		}
		serveOne(template, data, checkingSink{t: t, id: binary.BigEndian.Uint16(data)}, room)
	})
}
