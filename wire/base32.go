package wire

// base32Hex's alphabet (RFC 4648 section 7), either case, as the values of
// its characters; invalidBase32 marks every other octet.
const invalidBase32 = 0xFF

var base32Values = func() (t [256]byte) {
	for i := range t {
		t[i] = invalidBase32
	}
	for i, c := range "0123456789ABCDEFGHIJKLMNOPQRSTUV" {
		t[c] = byte(i)
		if c >= 'A' {
			t[c+'a'-'A'] = byte(i)
		}
	}
	return t
}()

// decodeBase32Hex appends the octets s encodes when s is whole groups of
// eight characters of base32hex, in either case, and reports whether it
// was: a group of eight is five octets, assembled in one word, and one
// test per group finds an invalid character. For anything else (an
// invalid character, a partial group, a newline) it appends nothing, and
// the caller decodes as miekg/dns does, with encoding/base32 and its
// errors. encoding/base32 spends most of an NSEC3 record's time on the
// 32 characters of its hash.
func decodeBase32Hex(b []byte, s string) ([]byte, bool) {
	if len(s)%8 != 0 {
		return b, false
	}
	start := len(b)
	for k := 0; k < len(s); k += 8 {
		g := s[k : k+8]
		v0, v1, v2, v3 := base32Values[g[0]], base32Values[g[1]], base32Values[g[2]], base32Values[g[3]]
		v4, v5, v6, v7 := base32Values[g[4]], base32Values[g[5]], base32Values[g[6]], base32Values[g[7]]
		if (v0|v1|v2|v3|v4|v5|v6|v7)&0xE0 != 0 {
			return b[:start], false
		}
		x := uint64(v0)<<35 | uint64(v1)<<30 | uint64(v2)<<25 | uint64(v3)<<20 |
			uint64(v4)<<15 | uint64(v5)<<10 | uint64(v6)<<5 | uint64(v7)
		b = append(b, byte(x>>32), byte(x>>24), byte(x>>16), byte(x>>8), byte(x))
	}
	return b, true
}
