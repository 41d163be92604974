// Package hugeheap backs the densely used parts of the Go heap with
// transparent huge pages (2 MiB), where the system leaves huge pages to the
// programs that ask for them (THP "madvise", Debian's and Ubuntu's
// default).
//
// A server's zones are most of its heap, and a query reads a few places in
// them that nothing predicts: with 4 KiB pages each is likely a page the
// TLB does not hold, and the walk of the page table to find it is a miss
// of its own, one that a prefetch waits for too. With 2 MiB pages the TLB
// holds a zone of tens of megabytes whole (bench/README.md, 2026-12-06).
//
// The Go runtime asks for no huge pages for its heap. Pass asks the kernel
// to collapse (MADV_COLLAPSE, Linux 6.1) each 2 MiB of the heap of which
// nine pages in ten or more are in memory: a huge page then costs at most
// a ninth more memory than the heap held there. A sparser chunk (never
// touched, or given back by the runtime's scavenger) is left as it is, and
// the heap is not marked for khugepaged, which would fill such chunks. Only
// wholly resident chunks, at first, left the zones of many small zones
// mostly in small pages: loaded among the collector's garbage, they lie in
// chunks of which the scavenger gave some pages back (bench/README.md,
// 2026-12-06). Where the scavenger gives back part of a huge page later,
// the kernel splits it.
//
// Memory made later, while the server answers, is not collapsed; a large
// object made then and read all over (replay's slots) may be advised
// before it is written (Advise), so that the kernel backs it with huge
// pages as it is first written, and no collapse is needed.
//
// A collapse is not for a server that is answering: it copies the chunk
// with the process's page tables locked, 5 ms a chunk on the machine
// measured, and the goroutine in the system call keeps its P meanwhile.
// Passes every 10 s under load took the p99 at 20,000 queries a second
// from 0.2 ms to 8 to 44 ms. So a server passes once, when its first zones
// are loaded and before it answers (plugin/zonestore).
package hugeheap

import (
	"errors"
	"os"
	"strconv"
	"strings"
)

// ChunkSize is the size of a huge page on amd64 and arm64 (4 KiB pages).
const ChunkSize = 2 << 20

// A mapping is one line of /proc/self/maps: [start, end), its permissions
// (rw-p), and whether it is anonymous memory (no file, no [heap] or
// [stack]).
type mapping struct {
	start, end uintptr
	perms      string
	anon       bool
}

// parseMaps reads the lines of /proc/self/maps. A line it cannot read is
// an error: the format is the kernel's, and a guess would advise memory
// that is not the heap.
func parseMaps(text string) ([]mapping, error) {
	var ms []mapping
	for line := range strings.Lines(text) {
		f := strings.Fields(line)
		if len(f) == 0 {
			continue
		}
		if len(f) < 5 {
			return nil, errors.New("hugeheap: unexpected maps line: " + strings.TrimSpace(line))
		}
		lo, hi, ok := strings.Cut(f[0], "-")
		if !ok {
			return nil, errors.New("hugeheap: unexpected address range: " + f[0])
		}
		start, err1 := strconv.ParseUint(lo, 16, 64)
		end, err2 := strconv.ParseUint(hi, 16, 64)
		if err := errors.Join(err1, err2); err != nil {
			return nil, err
		}
		// Anonymous: no path, or a name given to anonymous memory (the Go
		// runtime names its own, "[anon: Go: heap]", where the kernel
		// keeps such names).
		anon := len(f) == 5 || strings.HasPrefix(f[5], "[anon:")
		ms = append(ms, mapping{start: uintptr(start), end: uintptr(end), perms: f[1], anon: anon})
	}
	return ms, nil
}

// heapOf returns the writable private anonymous mappings of the run of
// anonymous mappings, each beginning where the last ends, that holds the
// heap address probe. The Go runtime reserves its heap's arenas one after
// another (without access, ---p) and maps parts of them for use (rw-p) as
// the heap grows; the kernel places every other mapping (the runtime's
// own metadata, thread stacks, files) where it chooses, away from them.
func heapOf(ms []mapping, probe uintptr) []mapping {
	at := -1
	for i, m := range ms {
		if m.start <= probe && probe < m.end {
			at = i
			break
		}
	}
	if at < 0 || !heapPart(ms[at]) {
		return nil
	}
	lo, hi := at, at
	for lo > 0 && heapPart(ms[lo-1]) && ms[lo-1].end == ms[lo].start {
		lo--
	}
	for hi+1 < len(ms) && heapPart(ms[hi+1]) && ms[hi].end == ms[hi+1].start {
		hi++
	}
	var heap []mapping
	for _, m := range ms[lo : hi+1] {
		if m.perms == "rw-p" {
			heap = append(heap, m)
		}
	}
	return heap
}

// heapPart reports whether m may be a part of the heap's arenas: private
// anonymous memory, mapped for use or reserved.
func heapPart(m mapping) bool {
	return m.anon && (m.perms == "rw-p" || m.perms == "---p")
}

// denseChunks returns the starts of the 2 MiB chunks within [start, end)
// of which at least nine pages in ten are resident, given mincore's vector
// for the range (a byte a page from start, its lowest bit set where the
// page is resident) and the page size. A collapse makes every page of a
// chunk resident: this bounds what it adds to a ninth of what was there.
func denseChunks(start, end uintptr, resident []byte, page uintptr) []uintptr {
	var dense []uintptr
	per := ChunkSize / page
	for c := (start + ChunkSize - 1) &^ (ChunkSize - 1); c+ChunkSize <= end; c += ChunkSize {
		first := (c - start) / page
		if first+per > uintptr(len(resident)) {
			break
		}
		n := uintptr(0)
		for _, r := range resident[first : first+per] {
			n += uintptr(r & 1)
		}
		if 10*n >= 9*per {
			dense = append(dense, c)
		}
	}
	return dense
}

// Stats says what a pass found and did.
type Stats struct {
	Heap      uintptr // octets of the heap's mappings for use
	Dense     int     // chunks of which nine pages in ten or more were resident
	Collapsed int     // of those, the chunks the kernel collapsed (or found collapsed already)
	Failed    int     // of those, the chunks it could not (no huge page free: EAGAIN)
}

// ErrUnsupported is Pass's answer where the kernel collapses nothing on
// request (before Linux 6.1, or another system).
var ErrUnsupported = errors.New("hugeheap: the kernel does not collapse memory into huge pages on request")

// Enabled reports whether the operator left huge pages on:
// ONTIME_HUGE_PAGES=0 turns them off.
func Enabled() bool { return os.Getenv("ONTIME_HUGE_PAGES") != "0" }

// Rollup returns a field of process pid's /proc/PID/smaps_rollup, in kB:
// AnonHugePages is how much of its memory is in huge pages, Rss how much
// is resident. An error from reading the file wraps the file system's.
func Rollup(pid int, field string) (int, error) {
	text, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/smaps_rollup")
	if err != nil {
		return 0, err
	}
	return parseRollup(string(text), field)
}

// parseRollup returns field's value, in kB, from smaps_rollup's text.
func parseRollup(text, field string) (int, error) {
	for line := range strings.Lines(text) {
		name, rest, ok := strings.Cut(line, ":")
		if ok && name == field {
			return strconv.Atoi(strings.TrimSuffix(strings.TrimSpace(rest), " kB"))
		}
	}
	return 0, errors.New("hugeheap: no " + field + " in smaps_rollup")
}
