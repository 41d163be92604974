package codel

import (
	"reflect"
	"strings"
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
	for _, cookie := range []string{"", "0102030405060708", "0102030405060708" + "1112131415161718191a1b1c1d1e1f20",
		"0102030405060708" + strings.Repeat("ab", 32), "0102030405060708" + strings.Repeat("ab", 33)} {
		m = new(dns.Msg)
		m.SetQuestion("cookie.example.", dns.TypeA)
		m.SetEdns0(1232, false)
		m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: cookie}}
		pack(m) // a COOKIE option: a client cookie, with a server cookie, the longest, one longer
	}
	m = new(dns.Msg)
	m.SetQuestion("cookie.example.", dns.TypeA)
	m.SetEdns0(1232, false)
	m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"}, &dns.EDNS0_PADDING{Padding: make([]byte, 5)}}
	pack(m) // a cookie and another option: Unpack's

	withCookie := cases[len(cases)-3] // the longest cookie
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
	// The cookie query with its option's length one more and one less
	// than its record's, and with its record cut short.
	for _, change := range []func(b []byte) []byte{
		func(b []byte) []byte { b[len(b)-10]++; return b },
		func(b []byte) []byte { b[len(b)-10]--; return b },
		func(b []byte) []byte { return b[:len(b)-3] },
	} {
		cases = append(cases, change(append([]byte{}, withCookie...)))
	}
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

// withACookie is a query with a client cookie, as BIND sends them.
func withACookie(t *testing.T) []byte {
	m := new(dns.Msg)
	m.SetQuestion("www.example.org.", dns.TypeA)
	m.SetEdns0(1232, false)
	m.IsEdns0().Option = []dns.EDNS0{&dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"}}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestUnpackAllocatesTheNameAlone: the common query, with EDNS or
// without, or with a cookie, costs one allocation, its name's string, and in a worker's room
// for names a share of a block (exactly counted: AllocsPerRun rounds down).
func TestUnpackAllocatesTheNameAlone(t *testing.T) {
	if raceflag.Enabled {
		t.Skip("the race detector's instrumentation allocates")
	}
	cases := unpackCases(t)
	common := append(cases[:2:2], withACookie(t))
	var u unpacked
	for i, m := range common {
		want := 1.0
		if i == 2 {
			want = 2 // and the cookie's text: a string of its own, as the name's
		}
		if n := testing.AllocsPerRun(100, func() { u.unpack(m) }); n != want {
			t.Errorf("% x: %v allocations, want %v", m, n, want)
		}
	}
	u.names = new(nameRoom)
	for _, m := range common {
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
