// Package swar works on eight octets of a DNS name at once, held in one
// 64-bit word (SIMD within a register): reading a word of a string,
// lowercasing its ASCII letters, and finding its dots. wire's encoder
// scans the names it writes with it, and zonestore the names it looks up.
package swar

import (
	"encoding/binary"
	"unsafe"
)

const ones = 0x0101010101010101

// Word returns the eight octets of s from k on, little-endian, with zeros
// past its end, without reading past it.
func Word(s string, k int) uint64 {
	switch {
	case len(s)-k >= 8:
		return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[k:]), 8))
	case len(s) >= 8:
		return binary.LittleEndian.Uint64(unsafe.Slice(unsafe.StringData(s[len(s)-8:]), 8)) >> (8 * uint(8-(len(s)-k)))
	}
	var x uint64
	for i := len(s) - 1; i >= k; i-- {
		x = x<<8 | uint64(s[i])
	}
	return x
}

// Dots marks, with the high bit of each, the octets among the first r of
// x that are dots. (Exact: no borrow crosses octets.)
func Dots(x uint64, r int) uint64 {
	y := x ^ '.'*ones
	nonzero := (y&^(0x80*ones) + 0x7F*ones) | y
	m := ^nonzero & (0x80 * ones)
	if r < 8 {
		m &= 1<<(8*uint(r)) - 1
	}
	return m
}

// Lower lowercases the ASCII letters among eight octets at once.
func Lower(x uint64) uint64 {
	heptets := x &^ (0x80 * ones)
	geA := heptets + (0x80-'A')*ones // high bit set where the octet is >= 'A'
	gtZ := heptets + (0x7F-'Z')*ones // high bit set where the octet is > 'Z'
	upper := geA &^ gtZ &^ x & (0x80 * ones)
	return x | upper>>2
}
