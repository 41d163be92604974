package codel

import (
	"reflect"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
	"github.com/ontimedns/ontime/internal/raceflag"
)

// unpackCases are queries as clients send them, and as they arrive broken:
// each must unpack as dns.Msg.Unpack unpacks it.
func unpackCases(tb testing.TB) [][]byte {
	var cases [][]byte
	pack := func(m *dns.Msg) {
		b, err := m.Pack()
		if err != nil {
			tb.Fatal(err)
		}
		cases = append(cases, b)
	}
	for _, q := range workload.Queries(50000, 20) {
		m := new(dns.Msg)
		m.SetQuestion(q.Name, dns.StringToType[q.Type])
		pack(m)
		m.SetEdns0(1232, true) // EDNS, DO set
		pack(m)
	}
	m := new(dns.Msg)
	m.SetQuestion("WwW.Example.ORG.", dns.TypeAAAA)
	m.SetEdns0(4096, false)
	m.IsEdns0().Option = append(m.IsEdns0().Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"})
	m.IsEdns0().SetExtendedRcode(dns.RcodeBadVers) // upper bits of the rcode in the OPT
	m.Id, m.CheckingDisabled, m.AuthenticatedData, m.Zero = 4242, true, true, true
	pack(m)
	m = new(dns.Msg)
	m.SetQuestion("signed.example.", dns.TypeSOA)
	m.SetTsig("key.", dns.HmacSHA256, 300, 1700000000)
	b, _, err := dns.TsigGenerate(m, "c2VjcmV0c2VjcmV0c2VjcmV0", "", false)
	if err != nil {
		tb.Fatal(err)
	}
	cases = append(cases, b) // a TSIG record as the one additional record
	m = new(dns.Msg)
	m.SetQuestion("a.example.", dns.TypeA)
	m.Answer = []dns.RR{&dns.A{Hdr: dns.RR_Header{Name: "a.example.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: []byte{192, 0, 2, 1}}}
	pack(m) // an answer section: Unpack's
	m = new(dns.Msg)
	m.SetQuestion("a.example.", dns.TypeA)
	m.SetEdns0(1232, false)
	m.Extra = append(m.Extra, &dns.A{Hdr: dns.RR_Header{Name: "a.example.", Rrtype: dns.TypeA, Class: dns.ClassINET}, A: []byte{192, 0, 2, 1}})
	pack(m) // two additional records: Unpack's
	full := cases[0]
	cases = append(cases,
		full[:12],          // a header alone
		full[:len(full)-4], // the name, no type or class
		full[:len(full)-2], // the name and type, no class
		full[:len(full)-1], // one octet short
		append(append([]byte{}, full...), 0xde, 0xad),                            // trailing octets
		[]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1},                // an additional record announced, none there
		[]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1, 0},             // an additional record cut short
		[]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0xc0, 12, 0, 1, 0, 1},         // a pointer in the question, to itself
		[]byte{0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 64, 'a', 0, 1, 0, 1},          // a label too long
		[]byte{0, 1, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1, 0, 0, 1, 0, 1}, // two questions
		[]byte{0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},                               // no question
		[]byte{0, 1, 0x80, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1},             // a response
		[]byte{0, 1, 0x28, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 6, 0, 1},             // an UPDATE
		[]byte{0, 1, 0, 0}, // shorter than a header
	)
	return cases
}

// sameAsUnpack checks that unpacked.unpack gives what dns.Msg.Unpack gives
// for m: an error for the same inputs, the same message otherwise.
func sameAsUnpack(t *testing.T, u *unpacked, m []byte) {
	t.Helper()
	want := new(dns.Msg)
	wantErr := want.Unpack(m)
	gotErr := u.unpack(m)
	if (gotErr == nil) != (wantErr == nil) {
		t.Fatalf("% x: error %v, Unpack's %v", m, gotErr, wantErr)
	}
	if wantErr != nil {
		return
	}
	if !reflect.DeepEqual(&u.msg, want) {
		t.Fatalf("% x:\nunpacked %v\nUnpack   %v", m, &u.msg, want)
	}
}

// TestUnpackIsUnpack: a query read off the socket is the message
// dns.Msg.Unpack would have made of it, on every case, with one unpacked
// reused from each case to the next as the reader reuses it.
func TestUnpackIsUnpack(t *testing.T) {
	var u unpacked
	for _, m := range unpackCases(t) {
		sameAsUnpack(t, &u, m)
	}
}

// TestUnpackAllocatesTheNameAlone: the common query, with EDNS or
// without, costs one allocation, its name's string, and in a worker's room
// for names a share of a block (exactly counted: AllocsPerRun rounds down).
func TestUnpackAllocatesTheNameAlone(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	cases := unpackCases(t)
	var u unpacked
	for _, m := range cases[:2] {
		if n := testing.AllocsPerRun(100, func() { u.unpack(m) }); n != 1 {
			t.Errorf("% x: %v allocations, want 1", m, n)
		}
	}
	u.names = new(nameRoom)
	for _, m := range cases[:2] {
		const runs = 10000
		made := mallocs(func() {
			for range runs {
				u.unpack(m)
			}
		})
		if n := float64(made) / runs; n > 0.05 {
			t.Errorf("% x: %.3f allocations in a room, want a block's share", m, n)
		}
	}
}

// FuzzUnpack holds unpack to dns.Msg.Unpack on arbitrary datagrams.
//
//	go test -run XXX -fuzz FuzzUnpack -fuzztime 30s ./plugin/codel/
func FuzzUnpack(f *testing.F) {
	for _, m := range unpackCases(f) {
		f.Add(m)
	}
	u := unpacked{names: new(nameRoom)} // names made as a worker makes them
	f.Fuzz(func(t *testing.T, m []byte) {
		sameAsUnpack(t, &u, m)
	})
}
