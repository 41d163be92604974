package hugeheap

import (
	"errors"
	"io/fs"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unsafe"
)

func TestParseMaps(t *testing.T) {
	text := `00400000-0452b000 r-xp 00000000 fe:00 10412893                           /work/main/coredns
0514e000-071b0000 rw-p 00000000 00:00 0 
27fdb000-27ffc000 rw-p 00000000 00:00 0                                  [heap]
14b02e800000-14b033400000 rw-p 00000000 00:00 0
14b033400000-14b034800000 ---p 00000000 00:00 0
7fa0e4000000-7fa0e40a4000 rw-p 00000000 00:00 0 /tmp/a file with spaces
c000000000-c004000000 rw-p 00000000 00:00 0                              [anon: Go: heap]
c004000000-c008000000 ---p 00000000 00:00 0                              [anon: Go: heap reservation]
7ffd2a977000-7ffd2a998000 rw-p 00000000 00:00 0                          [stack]
`
	ms, err := parseMaps(text)
	if err != nil {
		t.Fatal(err)
	}
	want := []mapping{
		{0x400000, 0x452b000, "r-xp", false},
		{0x514e000, 0x71b0000, "rw-p", true},
		{0x27fdb000, 0x27ffc000, "rw-p", false},
		{0x14b02e800000, 0x14b033400000, "rw-p", true},
		{0x14b033400000, 0x14b034800000, "---p", true},
		{0x7fa0e4000000, 0x7fa0e40a4000, "rw-p", false},
		{0xc000000000, 0xc004000000, "rw-p", true},
		{0xc004000000, 0xc008000000, "---p", true},
		{0x7ffd2a977000, 0x7ffd2a998000, "rw-p", false},
	}
	if !slices.Equal(ms, want) {
		t.Fatalf("parsed\n%v\nwant\n%v", ms, want)
	}
	for _, bad := range []string{"00400000 r-xp 0 0 0\n", "0040000g-00500000 rw-p 0 00:00 0\n", "00400000-00500000 rw-p\n"} {
		if _, err := parseMaps(bad); err == nil {
			t.Errorf("%q: no error", bad)
		}
	}
	self, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip("no /proc/self/maps:", err)
	}
	if _, err := parseMaps(string(self)); err != nil {
		t.Fatalf("this process's maps: %v", err)
	}
}

func TestHeapOf(t *testing.T) {
	const M = 1 << 20
	ms := []mapping{
		{0x1000 * M, 0x1004 * M, "rw-p", true}, // anonymous, but not next to the heap
		{0x2000 * M, 0x2040 * M, "rw-p", true}, // the heap's first arena, in use
		{0x2040 * M, 0x2080 * M, "---p", true}, // reserved
		{0x2080 * M, 0x2090 * M, "rw-p", true}, // the next arena's part in use
		{0x2090 * M, 0x20c0 * M, "---p", true},
		{0x20c0 * M, 0x20c1 * M, "rw-p", false}, // a file next to it
		{0x20c1 * M, 0x20c2 * M, "rw-p", true},  // past the file: not the heap's run
		{0x7000 * M, 0x7008 * M, "rw-p", true},  // a thread's stack
	}
	got := heapOf(ms, 0x2085*M)
	want := []mapping{ms[1], ms[3]}
	if !slices.Equal(got, want) {
		t.Fatalf("heap %v, want %v", got, want)
	}
	if got := heapOf(ms, 0x2010*M); !slices.Equal(got, want) {
		t.Fatalf("from the first arena: heap %v, want %v", got, want)
	}
	if got := heapOf(ms, 0x20c0*M+5); got != nil {
		t.Fatalf("a probe in a file's mapping: %v", got)
	}
	if got := heapOf(ms, 0x3000*M); got != nil {
		t.Fatalf("a probe in no mapping: %v", got)
	}
}

// TestDenseChunks: a chunk is collapsed where nine of its pages in ten or
// more are resident (461 of 512), not where fewer are; only the lowest bit
// of mincore's byte says resident; chunks are 2 MiB aligned, and none
// reaches past the range or the vector.
func TestDenseChunks(t *testing.T) {
	const page = 4096
	per := ChunkSize / page                // 512
	start := uintptr(3*ChunkSize - 5*page) // five pages before a chunk begins
	end := start + 5*page + 4*ChunkSize + 7*page
	resident := make([]byte, (end-start)/page)
	for i := range resident {
		resident[i] = 1
	}
	chunk := func(i int) []byte { return resident[5+i*per : 5+(i+1)*per] }
	for j := range 51 { // the first chunk: 461 resident
		chunk(0)[j*10] = 0
	}
	for j := range 52 { // the second: 460
		chunk(1)[j*9] = 0
	}
	for j := range chunk(2) { // the third: none, by the lowest bit
		chunk(2)[j] = 0b10
	}
	// The fourth is whole; outside every chunk nothing counts.
	resident[0], resident[len(resident)-1] = 0, 0
	got := denseChunks(start, end, resident, page)
	want := []uintptr{3 * ChunkSize, 6 * ChunkSize}
	if !slices.Equal(got, want) {
		t.Fatalf("dense %x, want %x", got, want)
	}
	// A vector shorter than the range (the mapping shrank): no chunk past it.
	if got := denseChunks(start, end, resident[:5+per-1], page); got != nil {
		t.Fatalf("short vector: %x", got)
	}
}

// rollup reads a field of this process's smaps_rollup, in kB.
func rollup(t *testing.T, field string) int {
	t.Helper()
	kb, err := Rollup(os.Getpid(), field)
	if errors.Is(err, fs.ErrNotExist) {
		t.Skip("no smaps_rollup:", err)
	}
	if err != nil {
		t.Fatal(err)
	}
	return kb
}

var kept [][]byte

// TestPassCollapsesTheHeap fills 96 MiB of the heap with small objects and
// checks that a pass puts most of them in huge pages, and leaves their
// contents as they were; and that it takes hardly any memory the heap did
// not hold: beside them is a 32 MiB object of which only one page in two
// was ever written, whose chunks a pass must leave alone.
func TestPassCollapsesTheHeap(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	kept = nil
	for i := range 96 << 20 / 256 {
		b := make([]byte, 256)
		for j := range b {
			b[j] = byte(i + j)
		}
		kept = append(kept, b)
	}
	// A large object's pages are fresh from the kernel, which the runtime
	// knows are zero and does not clear: only the written ones are resident.
	sparse := make([]byte, 32<<20)
	for i := 0; i < len(sparse); i += 2 * os.Getpagesize() {
		sparse[i] = 1
	}
	maps, err := os.ReadFile("/proc/self/maps")
	if err != nil {
		t.Skip(err)
	}
	ms, err := parseMaps(string(maps))
	if err != nil {
		t.Fatal(err)
	}
	heap := heapOf(ms, uintptr(unsafe.Pointer(&kept[len(kept)/2][0])))
	if len(heap) == 0 {
		t.Fatal("the heap's mappings not found")
	}
	hugeBefore, rssBefore := rollup(t, "AnonHugePages"), rollup(t, "Rss")
	st, err := Pass()
	if err == ErrUnsupported {
		t.Skip("the kernel collapses nothing on request")
	}
	if err != nil {
		t.Fatal(err)
	}
	hugeAfter, rssAfter := rollup(t, "AnonHugePages"), rollup(t, "Rss")
	t.Logf("heap %d MiB, %d chunks dense, %d collapsed, %d failed; huge pages %d -> %d kB, resident %d -> %d kB",
		st.Heap>>20, st.Dense, st.Collapsed, st.Failed, hugeBefore, hugeAfter, rssBefore, rssAfter)
	// The objects' 96 MiB are in huge pages: collapsed by this pass where
	// the process had none before (the test's first run), or by an earlier
	// run's pass, whose memory they may reuse (-count N).
	huge := hugeAfter - hugeBefore
	if hugeBefore > 0 {
		huge = hugeAfter
	}
	if st.Collapsed < 32 || huge < 64<<10 {
		t.Errorf("collapsed %d chunks, huge pages %d -> %d kB: want 64 MiB of 96 at least", st.Collapsed, hugeBefore, hugeAfter)
	}
	if rssAfter-rssBefore > 4<<10 {
		t.Errorf("resident memory grew from %d to %d kB: a chunk barely resident was collapsed", rssBefore, rssAfter)
	}
	for i, b := range kept {
		for j := range b {
			if b[j] != byte(i+j) {
				t.Fatalf("object %d changed at %d", i, j)
			}
		}
	}
	kept = nil
	runtime.KeepAlive(sparse)
}

// vmstat reads a counter of /proc/vmstat.
func vmstat(t *testing.T, name string) int {
	t.Helper()
	text, err := os.ReadFile("/proc/vmstat")
	if err != nil {
		t.Skip(err)
	}
	for line := range strings.Lines(string(text)) {
		if f := strings.Fields(line); len(f) == 2 && f[0] == name {
			n, err := strconv.Atoi(f[1])
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	return 0
}

// TestAdviseBacksWithHugePages: a large object advised before it is
// written is in huge pages once written, its chunks that lie wholly inside
// it, and holds what was written. In a process of its own, whose heap has
// held nothing else: memory the heap had written before is not fresh from
// the kernel, and stays in the pages it has (-count 2 found it so).
func TestAdviseBacksWithHugePages(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("Linux only")
	}
	if thp, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled"); err != nil || strings.Contains(string(thp), "[never]") {
		t.Skipf("transparent huge pages off: %q %v", thp, err)
	}
	if os.Getenv("HUGEHEAP_ADVISE_CHILD") == "" {
		cmd := exec.Command(os.Args[0], "-test.run=^TestAdviseBacksWithHugePages$", "-test.v")
		cmd.Env = append(os.Environ(), "HUGEHEAP_ADVISE_CHILD=1")
		out, err := cmd.CombinedOutput()
		t.Logf("%s", out)
		if err != nil {
			t.Fatal(err)
		}
		return
	}
	b := make([]byte, 16<<20) // fresh from the kernel: not yet resident
	hugeBefore, fallbackBefore := rollup(t, "AnonHugePages"), vmstat(t, "thp_fault_fallback")
	Advise(unsafe.Pointer(&b[0]), uintptr(len(b)))
	for i := 0; i < len(b); i += os.Getpagesize() {
		b[i] = byte(i >> 12)
	}
	huge := rollup(t, "AnonHugePages") - hugeBefore
	if fallback := vmstat(t, "thp_fault_fallback") - fallbackBefore; huge < 12<<10 && fallback > 0 {
		t.Skipf("the kernel had no huge page free for %d faults", fallback)
	}
	// 7 of the 8 chunks at least lie wholly inside the object.
	if huge < 12<<10 {
		t.Errorf("huge pages grew by %d kB, want 12 MiB of the object's 16 at least", huge)
	}
	for i := 0; i < len(b); i += os.Getpagesize() {
		if b[i] != byte(i>>12) {
			t.Fatalf("the object changed at %d", i)
		}
	}
	runtime.KeepAlive(b)
}
