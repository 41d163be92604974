package test

import (
	"fmt"
	"testing"

	"github.com/miekg/dns"
)

// TestEDNSCompliance runs the queries of ISC's EDNS compliance tests
// (genreport: dns, edns, edns1, edns@512, ednsopt, edns1opt, do,
// ednsflags, optlist, ednstcp) against zonestore, with and without
// fastpack and codel, and checks what RFC 6891 and RFC 8906 require: an unknown
// EDNS version gets BADVERS with an OPT of version 0, unknown options are
// ignored and not echoed, unknown flags are cleared, DO is echoed, and an
// OPT is in every answer to a query that had one, and in none that did not.
func TestEDNSCompliance(t *testing.T) {
	zf := t.TempDir() + "/db.example.org"
	writeZone(t, zf, 1, "www A 192.0.2.1")
	for _, chain := range []string{"", "    fastpack\n", "    codel\n    fastpack\n"} {
		s := startCoreDNS(t, fmt.Sprintf("%s    zonestore %s example.org", chain, zf), "example.org")
		for _, tc := range []struct {
			name    string
			edns    bool
			version uint8
			opt     []dns.EDNS0
			flags   uint16 // the OPT's flags field (DO is 0x8000)
			size    uint16
			tcp     bool
			rcode   int
			do      bool
		}{
			{name: "dns", rcode: dns.RcodeSuccess},
			{name: "edns", edns: true, rcode: dns.RcodeSuccess},
			{name: "edns1", edns: true, version: 1, rcode: dns.RcodeBadVers},
			{name: "edns@512", edns: true, size: 512, rcode: dns.RcodeSuccess},
			{name: "ednsopt", edns: true, opt: []dns.EDNS0{&dns.EDNS0_LOCAL{Code: 100, Data: []byte{}}}, rcode: dns.RcodeSuccess},
			{name: "edns1opt", edns: true, version: 1, opt: []dns.EDNS0{&dns.EDNS0_LOCAL{Code: 100, Data: []byte{}}}, rcode: dns.RcodeBadVers},
			{name: "do", edns: true, flags: 0x8000, rcode: dns.RcodeSuccess, do: true},
			{name: "ednsflags", edns: true, flags: 0x0080, rcode: dns.RcodeSuccess},
			{name: "optlist", edns: true, opt: []dns.EDNS0{&dns.EDNS0_NSID{Code: dns.EDNS0NSID}, &dns.EDNS0_SUBNET{Code: dns.EDNS0SUBNET, Family: 1, SourceNetmask: 0, Address: []byte{0, 0, 0, 0}}, &dns.EDNS0_EXPIRE{Code: dns.EDNS0EXPIRE}, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0102030405060708"}}, rcode: dns.RcodeSuccess},
			{name: "ednstcp", edns: true, tcp: true, rcode: dns.RcodeSuccess},
		} {
			name := fmt.Sprintf("%s (chain %q)", tc.name, chain)
			m := new(dns.Msg)
			m.SetQuestion("example.org.", dns.TypeSOA)
			m.RecursionDesired = false
			if tc.edns {
				o := &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT}}
				size := tc.size
				if size == 0 {
					size = 4096
				}
				o.SetUDPSize(size)
				o.SetVersion(tc.version)
				o.Hdr.Ttl |= uint32(tc.flags)
				o.Option = tc.opt
				m.Extra = append(m.Extra, o)
			}
			r, err := exchange(t, s.addr, m, tc.tcp)
			if err != nil {
				t.Errorf("%s: %v", name, err)
				continue
			}
			if r.Rcode != tc.rcode {
				t.Errorf("%s: rcode %s, want %s", name, dns.RcodeToString[r.Rcode], dns.RcodeToString[tc.rcode])
			}
			opt := r.IsEdns0()
			if (opt != nil) != tc.edns {
				t.Errorf("%s: OPT in the answer %v, in the query %v", name, opt != nil, tc.edns)
				continue
			}
			if opt == nil {
				continue
			}
			if opt.Version() != 0 {
				t.Errorf("%s: answered with EDNS version %d", name, opt.Version())
			}
			if opt.Do() != tc.do {
				t.Errorf("%s: DO %v, want %v", name, opt.Do(), tc.do)
			}
			if z := uint16(opt.Hdr.Ttl) &^ 0x8000; z != 0 {
				t.Errorf("%s: unknown flags %#x echoed", name, z)
			}
			for _, o := range opt.Option {
				if _, ok := o.(*dns.EDNS0_LOCAL); ok {
					t.Errorf("%s: unknown option %d echoed", name, o.Option())
				}
			}
			if tc.rcode == dns.RcodeSuccess && (len(r.Answer) != 1 || !r.Authoritative) {
				t.Errorf("%s: answer %v, AA %v", name, r.Answer, r.Authoritative)
			}
		}
	}
}

// TestEDNSTwoOPTIsFormErr: a query with two OPT records gets FORMERR
// (RFC 6891 section 6.1.1), through every chain.
func TestEDNSTwoOPTIsFormErr(t *testing.T) {
	zf := t.TempDir() + "/db.example.org"
	writeZone(t, zf, 1, "www A 192.0.2.1")
	for _, chain := range []string{"", "    codel\n    fastpack\n"} {
		s := startCoreDNS(t, fmt.Sprintf("%s    zonestore %s example.org", chain, zf), "example.org")
		m := new(dns.Msg)
		m.SetQuestion("example.org.", dns.TypeSOA)
		m.SetEdns0(4096, false)
		m.SetEdns0(1232, false)
		m.Extra = append(m.Extra, &dns.OPT{Hdr: dns.RR_Header{Name: ".", Rrtype: dns.TypeOPT, Class: 1232}})
		r, err := exchange(t, s.addr, m, false)
		if err != nil {
			t.Fatalf("chain %q: %v", chain, err)
		}
		if r.Rcode != dns.RcodeFormatError {
			t.Errorf("chain %q: two OPT records answered %s, want FORMERR", chain, dns.RcodeToString[r.Rcode])
		}
	}
}
