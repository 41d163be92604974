package zonestore

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/miekg/dns"
)

func walked(z *Zone) []string {
	var out []string
	z.Walk(func(rrs []dns.RR) bool {
		for _, rr := range rrs {
			out = append(out, rr.String())
		}
		return true
	})
	slices.Sort(out)
	return out
}

// TestReparseIsParse: a re-read built as an edit is the zone a whole
// parse gives, whatever changed: a few records, a name's spelling, most of
// the zone (built whole), or nothing but the serial; a broken new file is
// an error, as it is for Parse.
func TestReparseIsParse(t *testing.T) {
	var hosts []string
	for i := range 200 {
		hosts = append(hosts, "h"+itoa(i)+" A 192.0.2."+itoa(i%250))
	}
	base := head + strings.Join(hosts, "\n") + "\nwww CNAME h1\nsub NS ns.sub\nns.sub A 192.0.2.99\nmail MX 10 h2\n" +
		"idn CNAME caf\xc3\xa9.example.net.\nkelvin NS k.example.net.\n" // names written in raw UTF-8
	old, err := parse(t, base)
	if err != nil {
		t.Fatal(err)
	}
	bump := func(s string) string { return strings.Replace(s, "SOA ns1 hostmaster 1 ", "SOA ns1 hostmaster 2 ", 1) }
	for _, tc := range []struct {
		name, text string
	}{
		{"serial only", bump(base)},
		{"a few records", bump(strings.Replace(strings.Replace(base, "h5 A 192.0.2.5\n", "h5 A 192.0.2.55\nnew TXT hello\n", 1), "www CNAME h1\n", "", 1))},
		{"a name's spelling", bump(strings.Replace(base, "h7 A", "H7 A", 1))},
		{"a TTL", bump(strings.Replace(base, "h8 A", "h8 60 A", 1))},
		{"most of it", bump(head + "only A 192.0.2.1\n")},
		{"a delegation removed", bump(strings.Replace(base, "sub NS ns.sub\n", "", 1))},
		// Only A to Z have a case in DNS names (RFC 4343): é and É, a
		// Kelvin sign and k, are other names, which strings.EqualFold
		// took for the same, and the edit kept the old target.
		{"a target's é for É", bump(strings.Replace(base, "caf\xc3\xa9", "caf\xc3\x89", 1))},
		{"a target's k for a Kelvin sign", bump(strings.Replace(base, "NS k.example.net.", "NS \xe2\x84\xaa.example.net.", 1))},
	} {
		want, err := parse(t, tc.text)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		got, err := old.Reparse(strings.NewReader(tc.text), "db.example.org")
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if g, w := walked(got), walked(want); !slices.Equal(g, w) {
			t.Errorf("%s: reparsed %d records, parsed %d", tc.name, len(g), len(w))
		}
		if got.Records() != want.Records() || got.Names() != want.Names() || got.Serial() != 2 {
			t.Errorf("%s: %d records %d names, want %d %d", tc.name, got.Records(), got.Names(), want.Records(), want.Names())
		}
		for _, q := range []string{"h7.example.org.", "www.example.org.", "x.sub.example.org.", "new.example.org.", "h5.example.org."} {
			g, w := got.Lookup(q, dns.TypeA, false), want.Lookup(q, dns.TypeA, false)
			if g.Rcode != w.Rcode || len(g.Answer) != len(w.Answer) || len(g.Ns) != len(w.Ns) {
				t.Errorf("%s: %s answered %v, parse %v", tc.name, q, g, w)
			}
		}
	}
	for _, broken := range []string{
		bump(base) + "www A 192.0.2.1\n", // CNAME and other data
		bump(base) + "h1 3x A 192.0.2.1\n",
		bump(base) + "sub2 NS ns.sub2\n", // glue missing
	} {
		if _, err := old.Reparse(strings.NewReader(broken), "db.example.org"); err == nil {
			t.Errorf("a broken file reparsed: %q", broken[len(broken)-30:])
		}
	}
}

func itoa(i int) string { return fmt.Sprint(i) }
