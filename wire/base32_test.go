package wire

import (
	"bytes"
	"encoding/base32"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestBase32FastPathAgreesWithEncodingBase32: on every string it accepts,
// the fast decoder gives what encoding/base32 gives (after the uppercasing
// miekg/dns does), and it accepts every string of whole groups of valid
// characters; on the rest the encoder falls back to encoding/base32.
func TestBase32FastPathAgreesWithEncodingBase32(t *testing.T) {
	const alphabet = "0123456789ABCDEFGHIJKLMNOPQRSTUVabcdefghijklmnopqrstuv"
	r := rand.New(rand.NewPCG(1, 2))
	cases := []string{"", "00000000", "VVVVVVVV", "vvvvvvvv", "0123456789abcdefghijklmnopqrstuv",
		"W0000000", "0000000w", "0000000", "000000000", "0000\n0000", "0000000=", "00000000\x00"}
	for range 20000 {
		n := r.IntN(6) * 8
		if r.IntN(4) == 0 {
			n += r.IntN(8)
		}
		var sb strings.Builder
		for range n {
			if r.IntN(50) == 0 {
				sb.WriteByte(byte(r.IntN(256))) // anything, valid or not
			} else {
				sb.WriteByte(alphabet[r.IntN(len(alphabet))])
			}
		}
		cases = append(cases, sb.String())
	}
	std := base32.HexEncoding.WithPadding(base32.NoPadding)
	for _, s := range cases {
		want, err := std.DecodeString(strings.ToUpper(s))
		got, ok := decodeBase32Hex([]byte("prefix"), s)
		if ok {
			if err != nil || !bytes.Equal(got, append([]byte("prefix"), want...)) {
				t.Fatalf("%q: fast path %x, encoding/base32 %x, %v", s, got, want, err)
			}
			continue
		}
		if string(got) != "prefix" {
			t.Fatalf("%q: refused, but appended %q", s, got)
		}
		if len(s)%8 == 0 && strings.Trim(s, alphabet) == "" && err == nil {
			t.Fatalf("%q: whole groups of valid characters, refused", s)
		}
	}
}
