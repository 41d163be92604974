package hugeheap

import (
	"os"
	"unsafe"

	"golang.org/x/sys/unix"
)

// probe holds a heap object, where the heap is. Made in Pass: a package
// variable's initial object may be laid out in the binary's data instead.
var probe *[64]byte

// Pass collapses every 2 MiB chunk of the heap of which nine pages in ten
// or more are resident into a huge page (a chunk already one costs a
// system call that finds it so).
func Pass() (Stats, error) {
	var st Stats
	text, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		return st, err
	}
	ms, err := parseMaps(string(text))
	if err != nil {
		return st, err
	}
	probe = new([64]byte)
	page := uintptr(os.Getpagesize())
	refused := 0
	for _, m := range heapOf(ms, uintptr(unsafe.Pointer(probe))) {
		st.Heap += m.end - m.start
		resident := make([]byte, (m.end-m.start+page-1)/page)
		if mincore(m.start, m.end-m.start, resident) != nil {
			continue // unmapped since /proc/self/maps was read
		}
		for _, c := range denseChunks(m.start, m.end, resident, page) {
			st.Dense++
			switch madvise(c, ChunkSize, unix.MADV_COLLAPSE) {
			case 0:
				st.Collapsed++
			case unix.EINVAL:
				refused++ // an older kernel's answer to advice it does not know
			default:
				st.Failed++
			}
		}
	}
	if st.Dense > 0 && refused == st.Dense {
		return st, ErrUnsupported
	}
	return st, nil
}

// The two system calls take addresses as numbers: the memory is the
// heap's, which the runtime keeps mapped, and these calls change nothing
// in it that Go sees (a collapse copies the pages' contents into one huge
// page under the kernel's locks).

// mincore fills resident with a byte a page of [addr, addr+n), its lowest
// bit set where the page is in memory (mincore(2)).
func mincore(addr, n uintptr, resident []byte) error {
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, addr, n, uintptr(unsafe.Pointer(unsafe.SliceData(resident))))
	if errno != 0 {
		return errno
	}
	return nil
}

func madvise(addr, n uintptr, advice int) unix.Errno {
	_, _, errno := unix.Syscall(unix.SYS_MADVISE, addr, n, uintptr(advice))
	return errno
}

// Advise asks for huge pages for the 2 MiB chunks wholly inside [p, p+n),
// memory the caller has just allocated and not yet touched: the kernel
// backs them with huge pages as they are first written (MADV_HUGEPAGE).
func Advise(p unsafe.Pointer, n uintptr) {
	if !Enabled() {
		return
	}
	start := (uintptr(p) + ChunkSize - 1) &^ (ChunkSize - 1)
	end := (uintptr(p) + n) &^ (ChunkSize - 1)
	if start < end {
		madvise(start, end-start, unix.MADV_HUGEPAGE)
	}
}
