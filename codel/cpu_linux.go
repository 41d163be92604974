//go:build linux

package codel

import (
	"bytes"
	"os"
	"sync"
	"time"
)

// processCPU returns, summed over the process's threads, the time they
// ran plus the time they waited, runnable, for a CPU (nanoseconds, from
// /proc/self/task/*/schedstat). A thread that waits for a CPU wants one:
// on a host shared with other processes, CPU time alone would count the
// time they take as idle. ok is false when schedstat cannot be read.
//
// In a virtual machine the hypervisor also takes CPUs away (steal time), and
// a thread running when its CPU is taken shows as neither running nor
// waiting: the machine's stolen time counts as waited for too. (It is
// counted whole, for every CPU: it accrues only while a CPU has work, and
// at worst a busy neighbour's share makes workers look less idle, so fewer
// are added.)
//
// The files stay open from one call to the next (procs): opening, reading
// and closing each thread's file and /proc/stat took 156 µs and 66
// allocations with eight threads, under the queue's lock, every 40 ms of a
// busy server.
func processCPU() (busy int64, ok bool) {
	procs.Lock()
	defer procs.Unlock()
	return procs.processCPU()
}

// procFiles are the files processCPU reads, kept open.
type procFiles struct {
	sync.Mutex
	task  *os.File             // /proc/self/task, listed again each call
	tasks map[string]*taskFile // each thread's schedstat, by thread id
	stat  *os.File             // /proc/stat
	round uint64               // calls, to close the files of threads gone
	// gone is the time of the threads that exited, as last read: the
	// sum only grows, so that an exit between two measures does not
	// read as time the process did not use.
	gone int64
	buf  [4096]byte
}

type taskFile struct {
	*os.File
	round uint64 // the last call that listed its thread
	last  int64  // its time when last read
}

var procs procFiles

func (f *procFiles) processCPU() (busy int64, ok bool) {
	if f.task == nil {
		t, err := os.Open("/proc/self/task")
		if err != nil {
			return 0, false
		}
		f.task, f.tasks = t, map[string]*taskFile{}
	}
	if _, err := f.task.Seek(0, 0); err != nil {
		return 0, false
	}
	ids, err := f.task.Readdirnames(-1)
	if err != nil {
		return 0, false
	}
	f.round++
	for _, id := range ids {
		t, k := f.readTask(id)
		if t == nil {
			continue // the thread exited
		}
		r, rest, ok1 := leadingInt(f.buf[:k])
		w, _, ok2 := leadingInt(rest)
		if !ok1 || !ok2 {
			return 0, false
		}
		t.last = r + w
	}
	busy = f.stolen()
	for id, t := range f.tasks {
		if t.round != f.round {
			f.drop(id, t)
			continue
		}
		busy += t.last
	}
	return busy + f.gone, true
}

// drop closes the file of thread id, which exited, keeping its time.
func (f *procFiles) drop(id string, t *taskFile) {
	f.gone += t.last
	t.Close()
	delete(f.tasks, id)
}

// readTask reads thread id's schedstat into f.buf, through the file kept
// open for it, and returns the file and the length read; nil if the thread
// exited. A file that reads nothing is of a thread that exited, whose id
// the kernel may have given to a new one since: it is opened again once.
func (f *procFiles) readTask(id string) (*taskFile, int) {
	for try := 0; try < 2; try++ {
		t := f.tasks[id]
		if t == nil {
			file, err := os.Open("/proc/self/task/" + id + "/schedstat")
			if err != nil {
				return nil, 0
			}
			t = &taskFile{File: file}
			f.tasks[id] = t
		}
		t.round = f.round
		if k, _ := t.ReadAt(f.buf[:], 0); k > 0 {
			return t, k
		}
		f.drop(id, t)
	}
	return nil, 0
}

// stolen returns the time the hypervisor took from this machine's CPUs
// (nanoseconds; /proc/stat's steal, in 10 ms ticks), or 0 where it is not
// reported.
func (f *procFiles) stolen() int64 {
	if f.stat == nil {
		s, err := os.Open("/proc/stat")
		if err != nil {
			return 0
		}
		f.stat = s
	}
	k, _ := f.stat.ReadAt(f.buf[:], 0)
	line, _, _ := bytes.Cut(f.buf[:k], []byte("\n"))
	fields := bytes.Fields(line) // cpu user nice system idle iowait irq softirq steal ...
	if len(fields) < 9 || string(fields[0]) != "cpu" {
		return 0
	}
	ticks, _, ok := leadingInt(fields[8])
	if !ok {
		return 0
	}
	return ticks * int64(10*time.Millisecond)
}

// leadingInt parses the decimal number that b starts with, after any
// spaces, and returns it and what follows it.
func leadingInt(b []byte) (v int64, rest []byte, ok bool) {
	b = bytes.TrimLeft(b, " ")
	i := 0
	for ; i < len(b) && '0' <= b[i] && b[i] <= '9'; i++ {
		v = v*10 + int64(b[i]-'0')
	}
	return v, b[i:], i > 0
}
