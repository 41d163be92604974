package swar

import (
	"encoding/binary"
	"math/rand/v2"
	"testing"
)

// octetwise is what the word functions do, an octet at a time.
func octetwise(x uint64, r int) (lower, dots uint64) {
	for i := range 8 {
		c := byte(x >> (8 * i))
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		lower |= uint64(c) << (8 * i)
		if i < r && byte(x>>(8*i)) == '.' {
			dots |= 0x80 << (8 * i)
		}
	}
	return lower, dots
}

// TestLowerAndDots: every octet value at every position, beside random
// neighbours, and a million random words, at every count of octets that
// count.
func TestLowerAndDots(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	check := func(x uint64) {
		for r := 0; r <= 8; r++ {
			lower, dots := octetwise(x, r)
			if got := Lower(x); got != lower {
				t.Fatalf("Lower(%016x) = %016x, want %016x", x, got, lower)
			}
			if got := Dots(x, r); got != dots {
				t.Fatalf("Dots(%016x, %d) = %016x, want %016x", x, r, got, dots)
			}
		}
	}
	for pos := range 8 {
		for c := range 256 {
			x := rng.Uint64()&^(0xFF<<(8*pos)) | uint64(c)<<(8*pos)
			check(x)
		}
	}
	for range 1 << 20 {
		// Octets drawn mostly from around the letters and the dot, where
		// the borrows and carries would go wrong.
		var b [8]byte
		for i := range b {
			b[i] = "@AZ[`az{.-/\x00\x7F\x80\xC1\xDA\xFF"[rng.IntN(17)]
			if rng.IntN(4) == 0 {
				b[i] = byte(rng.Uint32())
			}
		}
		check(binary.LittleEndian.Uint64(b[:]))
	}
}

// TestWord: every start in strings of every length up to 24, including
// the short ones read octet by octet and the tails read from the end.
func TestWord(t *testing.T) {
	s := "abcdefghijklmnopqrstuvwx"
	for n := 0; n <= len(s); n++ {
		for k := 0; k <= n; k++ {
			var want uint64
			for i := 7; i >= 0; i-- {
				want <<= 8
				if k+i < n {
					want |= uint64(s[k+i])
				}
			}
			if got := Word(s[:n], k); got != want {
				t.Fatalf("Word(%q, %d) = %016x, want %016x", s[:n], k, got, want)
			}
		}
	}
}
