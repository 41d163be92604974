package codel

import (
	"encoding/binary"
	"testing"

	"github.com/miekg/dns"
)

// TestRefusalsAsMiekgWithTheOPT: a message the reader refuses is answered
// as miekg/dns's server answers it (FORMERR, the ID and RD, the question
// where one unpacked whole), and with an OPT record where it has one that
// unpacks (RFC 6891 section 6.1.1), which miekg/dns leaves out.
func TestRefusalsAsMiekgWithTheOPT(t *testing.T) {
	template, _ := chainServer(t, " codel\n fastpack\n", false)
	pack := func(m *dns.Msg) []byte {
		b, err := m.Pack()
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	noQuestion := &dns.Msg{MsgHdr: dns.MsgHdr{Id: 7, RecursionDesired: true}}
	noQuestionOPT := noQuestion.Copy()
	noQuestionOPT.SetEdns0(4096, true)
	noQuestionA := noQuestion.Copy()
	noQuestionA.Extra = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "example.org.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: []byte{192, 0, 2, 1}}}
	twoQuestions := noQuestion.Copy()
	twoQuestions.Question = []dns.Question{{Name: "a.example.org.", Qtype: dns.TypeA, Qclass: dns.ClassINET}, {Name: "b.example.org.", Qtype: dns.TypeA, Qclass: dns.ClassINET}}
	q := new(dns.Msg)
	q.SetQuestion("www.example.org.", dns.TypeA)
	q.Id = 7
	q.SetEdns0(1232, false)
	badOption := pack(q)
	badOption = append(binary.BigEndian.AppendUint16(badOption[:len(badOption)-2], 4), 0, 10, 0, 8) // an option of 8 octets in 4

	for _, tc := range []struct {
		name     string
		pkt      []byte
		question bool // the answer echoes the question
		opt      bool // the answer has an OPT record, DO set
	}{
		{"no question", pack(noQuestion), false, false},
		{"no question, an OPT record with DO", pack(noQuestionOPT), false, true},
		{"no question, an A record", pack(noQuestionA), false, false},
		{"two questions", pack(twoQuestions), false, false},
		{"an option longer than its OPT record", badOption, true, false},
	} {
		var w recorder
		serveOne(template, tc.pkt, &w, new(nameRoom))
		m := new(dns.Msg)
		if err := m.Unpack(w.got); err != nil {
			t.Fatalf("%s: the answer % x does not unpack: %v", tc.name, w.got, err)
		}
		o := m.IsEdns0()
		if m.Rcode != dns.RcodeFormatError || m.Id != 7 || !m.Response || !m.RecursionDesired ||
			(len(m.Question) == 1) != tc.question || (o != nil) != tc.opt || (o != nil && (!o.Do() || o.Version() != 0)) {
			t.Errorf("%s: answered\n%v\nwant FORMERR, ID 7, RD, the question %v, an OPT record with DO %v", tc.name, m, tc.question, tc.opt)
		}
	}
}
