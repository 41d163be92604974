package replay

import (
	"bytes"
	"testing"

	"github.com/miekg/dns"
)

// packedAnswer is the answer to r as miekg/dns packs it, with compression:
// an owner that is the question's name points at it.
func packedAnswer(t testing.TB, r *dns.Msg, rrs ...string) []byte {
	t.Helper()
	m := new(dns.Msg)
	m.SetReply(r)
	m.Compress = true
	for _, s := range rrs {
		rr, err := dns.NewRR(s)
		if err != nil {
			t.Fatal(err)
		}
		m.Answer = append(m.Answer, rr)
	}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// An answer kept as one for any case is found for the question spelled
// in any case, a hit, with its question written as asked and every other
// octet as kept; not for a question that differs in anything else, and
// an answer kept without the flag is found only for its own spelling.
func TestAnAnswerForAnyCaseIsFoundInEach(t *testing.T) {
	var n Counts
	c := New(1024, &n)
	kept := query("www.example.org.", dns.TypeA)
	kept.SetEdns0(1232, false)
	wire := packedAnswer(t, kept, "www.example.org. 300 IN A 192.0.2.1")
	miss(c, kept, 1)
	c.Keep(1, Answer{Wire: append(c.Room(), wire...), Rcode: 0, Len: 61, AnyCase: true})

	asked := query("WwW.eXample.ORG.", dns.TypeA)
	asked.SetEdns0(1232, false)
	kept.Question[0].Name = asked.Question[0].Name // for packedAnswer below
	a := find(c, asked, 1)
	if a == nil {
		t.Fatal("not found in another case")
	}
	if want := packedAnswer(t, kept, "WwW.eXample.ORG. 300 IN A 192.0.2.1"); !bytes.Equal(a.Wire, want) {
		t.Fatalf("found\n% x\nwant the answer packed for its spelling\n% x", a.Wire, want)
	}
	if !a.AnyCase || a.Len != 61 {
		t.Fatalf("found %+v", a)
	}
	kept.Question[0].Name = "www.example.org."
	if a := find(c, kept, 1); a == nil || !bytes.Equal(a.Wire, wire) {
		t.Fatal("the spelling kept is no longer found as kept")
	}
	if h, m := n.Hits.Load(), n.Misses.Load(); h != 2 || m != 2 {
		t.Fatalf("%d hits, %d misses; want 2 and 2 (to keep it)", h, m)
	}

	for _, r := range []*dns.Msg{
		query("WwW.eXample.ORG.", dns.TypeA),    // no OPT
		query("WwW.eXample.ORG.", dns.TypeAAAA), // another type
		query("wwx.example.org.", dns.TypeA),    // another name
	} {
		if find(c, r, 1) != nil {
			t.Errorf("%v found", r.Question)
		}
	}
	if find(c, asked, 2) != nil {
		t.Error("found from another version")
	}

	// Kept without the flag (its answer holds the question's case in its
	// data), or with a question that is not its key's: found as asked only.
	for i, k := range []Answer{
		{Wire: wire},
		{Wire: packedAnswer(t, query("WWW.example.org.", dns.TypeA)), AnyCase: true},
	} {
		c := New(1024, new(Counts))
		miss(c, kept, 1)
		k.Wire = append(c.Room(), k.Wire...)
		c.Keep(1, k)
		if find(c, asked, 1) != nil {
			t.Errorf("answer %d: found in another case", i)
		}
		if find(c, kept, 1) == nil {
			t.Errorf("answer %d: not found as asked", i)
		}
	}
}

func TestSpellings(t *testing.T) {
	key := func(name string) []byte {
		k, _ := Key(nil, query(name, dns.TypeA), false)
		return k
	}
	for _, c := range []struct {
		a, b string
		same bool
	}{
		{"www.example.org.", "WWW.EXAMPLE.ORG.", true},
		{"a-b.example.org.", "A-B.example.org.", true},
		{".", ".", true},
		{"www.example.org.", "www.example.org.", true},
		{"@.example.org.", "`.example.org.", false}, // 0x40 and 0x60: no letters
		{"[.example.org.", "{.example.org.", false},
		{"www.example.org.", "www.example.com.", false},
		{"www.example.org.", "ww.wexample.org.", false},
		{"www.example.org.", "www.example.or.", false},
		{"a.", "A.", true}, // names shorter than a word
		{"@.", "`.", false},
		{"ab.", "aC.", false},
		{"abcdefg.", "ABCDEFG.", true},                      // a word
		{"host1.example.org.", "HOST1.EXAMPLE.ORG.", true},  // two words and the last, overlapping
		{"host1.example.org.", "host1.example.orh.", false}, // differing in the last word alone
	} {
		if got := sameButCase(key(c.a), key(c.b)); got != c.same {
			t.Errorf("sameButCase(%q, %q) = %v", c.a, c.b, got)
		}
	}
	// The fields after the name, octet for octet: types 65 and 97 are
	// 'A' and 'a' in their second octet, and so are EDNS sizes 1089 and
	// 1121 in theirs.
	a, _ := Key(nil, query("www.example.org.", 65), false)
	b, _ := Key(nil, query("www.example.org.", 97), false)
	if sameButCase(a, b) {
		t.Error("sameButCase: types 65 and 97")
	}
	m, n := query("www.example.org.", dns.TypeA), query("www.example.org.", dns.TypeA)
	m.SetEdns0(1089, false)
	n.SetEdns0(1121, false)
	a, _ = Key(nil, m, false)
	b, _ = Key(nil, n, false)
	if sameButCase(a, b) {
		t.Error("sameButCase: EDNS sizes 1089 and 1121")
	}

	for _, c := range []struct {
		name string
		ok   bool
	}{
		{"www.example.org.", true},
		{".", true},
		{"a.", true},
		{"w\\.w.example.org.", false}, // an escape
		{"www.example.org", false},
	} {
		m := new(dns.Msg)
		m.Question = []dns.Question{{Name: c.name, Qtype: dns.TypeA, Qclass: dns.ClassINET}}
		wire, err := m.Pack()
		if err != nil {
			if c.ok {
				t.Fatal(err)
			}
			continue
		}
		k, _ := Key(nil, m, false)
		if got := spelledAs(wire, k); got != c.ok {
			t.Errorf("spelledAs(%q) = %v", c.name, got)
		}
		if c.ok {
			up := bytes.ToUpper([]byte(c.name))
			respell(wire, string(up))
			var back dns.Msg
			if err := back.Unpack(wire); err != nil || back.Question[0].Name != string(up) {
				t.Errorf("respelled %q: %v %v", c.name, err, back.Question)
			}
		}
	}
	// A question spelled otherwise than its key, or a message of two.
	m = query("www.example.org.", dns.TypeA)
	wire, _ := m.Pack()
	if spelledAs(wire, key("WWW.example.org.")) {
		t.Error("spelledAs: another case")
	}
	m.Question = append(m.Question, m.Question[0])
	wire, _ = m.Pack()
	if spelledAs(wire, key("www.example.org.")) {
		t.Error("spelledAs: two questions")
	}
}
