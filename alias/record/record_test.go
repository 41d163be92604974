package record

import (
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func TestALIASParsesPacksAndUnpacks(t *testing.T) {
	rr, err := dns.NewRR("example.org. 300 IN ALIAS cdn.example.net.")
	if err != nil {
		t.Fatal(err)
	}
	if got := Target(rr); got != "cdn.example.net." {
		t.Fatalf("target %q", got)
	}
	if rr.Header().Rrtype != TypeALIAS || rr.String() != "example.org.\t300\tIN\tALIAS\tcdn.example.net." {
		t.Fatalf("parsed %q", rr.String())
	}
	m := new(dns.Msg)
	m.SetQuestion("example.org.", dns.TypeAXFR)
	m.Answer = []dns.RR{rr}
	b, err := m.Pack()
	if err != nil {
		t.Fatal(err)
	}
	var back dns.Msg
	if err := back.Unpack(b); err != nil {
		t.Fatal(err)
	}
	if len(back.Answer) != 1 || Target(back.Answer[0]) != "cdn.example.net." {
		t.Fatalf("unpacked %v", back.Answer)
	}
	if c := dns.Copy(rr); Target(c) != "cdn.example.net." {
		t.Fatalf("copy %v", c)
	}
	if New("example.org.", 300, "cdn.example.net.").String() != rr.String() {
		t.Fatal("New differs from the parsed record")
	}
}

func TestALIASCompletesARelativeTarget(t *testing.T) {
	zp := dns.NewZoneParser(strings.NewReader("@ 300 IN ALIAS cdn\nwww 300 IN ALIAS @\n"), "example.org.", "db.example.org")
	var got []string
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		Complete(rr, "example.org.")
		got = append(got, Target(rr))
	}
	if err := zp.Err(); err != nil {
		t.Fatal(err)
	}
	if strings.Join(got, " ") != "cdn.example.org. example.org." {
		t.Fatalf("targets %q", got)
	}
}
