//go:build linux

package main

import (
	"encoding/binary"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// stamp is the control message the kernel gives with SO_TIMESTAMPNS.
func stamp(t time.Time) []byte {
	oob := make([]byte, unix.CmsgSpace(16))
	h := (*unix.Cmsghdr)(unsafe.Pointer(&oob[0]))
	h.Level, h.Type = unix.SOL_SOCKET, unix.SCM_TIMESTAMPNS
	h.SetLen(unix.CmsgLen(16))
	binary.NativeEndian.PutUint64(oob[unix.CmsgLen(0):], uint64(t.Unix()))
	binary.NativeEndian.PutUint64(oob[unix.CmsgLen(0)+8:], uint64(t.Nanosecond()))
	return oob
}

// TestArrivalIsTheKernelsStamp: an answer stamped 30 ms ago arrived 30 ms
// ago, whenever it is read; without a stamp, or with one from the future
// (the wall clock stepped back), it arrived when it is read.
func TestArrivalIsTheKernelsStamp(t *testing.T) {
	start := time.Now().Add(-time.Second)
	at := arrival(start, stamp(time.Now().Add(-30*time.Millisecond)))
	if ago := time.Since(start) - time.Duration(at); ago < 30*time.Millisecond || ago > 5*time.Second {
		t.Errorf("stamped 30 ms ago: arrival %v ago", ago)
	}
	for name, oob := range map[string][]byte{"no stamp": nil, "a stamp from the future": stamp(time.Now().Add(time.Hour))} {
		before := time.Since(start)
		at := time.Duration(arrival(start, oob))
		if at < before || at > time.Since(start) {
			t.Errorf("%s: arrival %v, want when it was read (%v on)", name, at, before)
		}
	}
}
