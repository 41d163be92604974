package test

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"strings"
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

// TestEDNSComplianceWithDig runs ISC's EDNS compliance queries as its
// genreport script does, with dig's own options, against zonestore with
// and without codel and fastpack, and reads dig's report: the status, the
// OPT's version, its flags (DO echoed, unknown flags cleared: dig prints
// them as MBZ), and no unknown option echoed.
func TestEDNSComplianceWithDig(t *testing.T) {
	bin, err := exec.LookPath("dig")
	if err != nil {
		if os.Getenv("ONTIME_REQUIRE_KNOT") != "" {
			t.Fatal("dig not found: install Debian's dnsutils package (make test does)")
		}
		t.Skip("dig not found; `make test` installs it")
	}
	zf := t.TempDir() + "/db.example.org"
	writeZone(t, zf, 1, "www A 192.0.2.1")
	for _, chain := range []string{"", "    codel\n    fastpack\n"} {
		s := startCoreDNS(t, fmt.Sprintf("%s    zonestore %s example.org", chain, zf), "example.org")
		host, port, _ := net.SplitHostPort(s.addr)
		for _, tc := range []struct {
			name, args string
			status     string
			opt        string // dig's "; EDNS:" line must hold this; "" for no OPT at all
		}{
			{"dns", "+noedns soa", "NOERROR", ""},
			{"edns", "+edns=0 soa", "NOERROR", "version: 0, flags:;"},
			{"edns1", "+edns=1 +noednsneg soa", "BADVERS", "version: 0, flags:;"},
			{"edns@512", "+edns=0 +dnssec +bufsize=512 +ignore dnskey", "NOERROR", "version: 0, flags: do;"},
			{"ednsopt", "+edns=0 +ednsopt=100 soa", "NOERROR", "version: 0, flags:;"},
			{"edns1opt", "+edns=1 +noednsneg +ednsopt=100 soa", "BADVERS", "version: 0, flags:;"},
			{"do", "+edns=0 +dnssec soa", "NOERROR", "version: 0, flags: do;"},
			{"ednsflags", "+edns=0 +ednsflags=0x80 soa", "NOERROR", "version: 0, flags:;"},
			{"optlist", "+edns=0 +nsid +subnet=0.0.0.0/0 +expire +cookie=0102030405060708 soa", "NOERROR", "version: 0, flags:;"},
			{"ednstcp", "+edns=0 +tcp soa", "NOERROR", "version: 0, flags:;"},
		} {
			name := fmt.Sprintf("%s (chain %q)", tc.name, chain)
			args := append([]string{"@" + host, "-p", port, "+norec", "+time=2", "+tries=2"}, strings.Fields(tc.args)...)
			out, err := exec.Command(bin, append(args, "example.org")...).CombinedOutput()
			if err != nil {
				t.Fatalf("%s: dig %s: %v\n%s", name, strings.Join(args, " "), err, out)
			}
			report := string(out)
			if !strings.Contains(report, "status: "+tc.status+",") {
				t.Errorf("%s: want status %s:\n%s", name, tc.status, report)
			}
			edns := ""
			for _, line := range strings.Split(report, "\n") {
				if strings.HasPrefix(line, "; EDNS:") {
					edns = line
				}
			}
			switch {
			case tc.opt == "" && edns != "":
				t.Errorf("%s: an OPT record in the answer to a query without one:\n%s", name, report)
			case tc.opt != "" && !strings.Contains(edns, tc.opt):
				t.Errorf("%s: EDNS %q, want %q:\n%s", name, edns, tc.opt, report)
			case strings.Contains(edns, "MBZ"):
				t.Errorf("%s: unknown EDNS flags echoed: %q", name, edns)
			}
			if strings.Contains(report, "OPT=100") {
				t.Errorf("%s: the unknown option 100 echoed:\n%s", name, report)
			}
		}
	}
}
