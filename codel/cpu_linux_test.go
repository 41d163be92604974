//go:build linux

package codel

import (
	"fmt"
	"os"
	"runtime"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// TestStolenReadsProcStat checks stolen against /proc/stat read here
// independently (the first line's eighth value, in 10 ms ticks), and that
// processCPU counts it.
func TestStolenReadsProcStat(t *testing.T) {
	before := stolen()
	ns := procStatSteal(t)
	busy, ok := processCPU()
	after := stolen()
	if before > ns || ns > after {
		t.Fatalf("stolen %d then %d, /proc/stat %d between them", before, after, ns)
	}
	if !ok || busy < before {
		t.Fatalf("processCPU %d (ok %v), less than the stolen %d", busy, ok, before)
	}
}

// stolen is procs.stolen, under procs' lock.
func stolen() int64 {
	procs.Lock()
	defer procs.Unlock()
	return procs.stolen()
}

// procStatSteal is /proc/stat's steal (the first line's eighth value, in
// 10 ms ticks) in nanoseconds, read here with a file of its own.
func procStatSteal(t *testing.T) int64 {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Skip("no /proc/stat")
	}
	var user, nice, system, idle, iowait, irq, softirq, steal int64
	if _, err := fmt.Sscanf(string(b), "cpu %d %d %d %d %d %d %d %d", &user, &nice, &system, &idle, &iowait, &irq, &softirq, &steal); err != nil {
		t.Fatal(err)
	}
	return steal * int64(10*time.Millisecond)
}

// schedstatNow sums the threads' run and run-queue times and the machine's
// stolen time, each file opened and read afresh, as processCPU did before
// it kept them open.
func schedstatNow(t *testing.T) int64 {
	t.Helper()
	tasks, err := os.ReadDir("/proc/self/task")
	if err != nil {
		t.Skip("no /proc/self/task")
	}
	sum := procStatSteal(t)
	for _, task := range tasks {
		b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/schedstat")
		if err != nil {
			continue
		}
		var r, w int64
		if _, err := fmt.Sscanf(string(b), "%d %d", &r, &w); err != nil {
			t.Fatal(err)
		}
		sum += r + w
	}
	return sum
}

// TestProcessCPUCountsEveryThread: processCPU, its files kept open, sums
// what the files read afresh say, between a reading before it and one
// after; a thread that exits has its file closed, and one started later
// is counted.
func TestProcessCPUCountsEveryThread(t *testing.T) {
	for range 3 {
		bracketed(t)
		// A thread of its own, read by processCPU, then gone; before
		// the next bracket, as an exit takes its time out of the files.
		tid, end := lockedThread(5 * time.Millisecond)
		end()
		exited(tid)
	}
	processCPU()
	procs.Lock()
	open := len(procs.tasks)
	procs.Unlock()
	tasks, _ := os.ReadDir("/proc/self/task")
	if open > len(tasks) {
		t.Fatalf("%d schedstat files open for %d threads: the exited ones' are kept", open, len(tasks))
	}
}

// exited waits a moment for thread tid to exit. A goroutine that ends
// locked to its thread takes the thread with it, unless the thread is the
// process's first, which the runtime keeps (then it never exits).
func exited(tid int) {
	for try := 0; try < 200; try++ {
		if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", tid)); os.IsNotExist(err) {
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// TestProcessCPUReopensAReusedThreadID: a thread's file that reads nothing
// is of a thread that exited, and the kernel may give its id to a new
// thread: the file is opened again, and the new thread counted.
func TestProcessCPUReopensAReusedThreadID(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	// A thread's file, the thread then gone.
	dead := make(chan *os.File)
	go func() {
		runtime.LockOSThread() // not undone: the thread exits with the goroutine
		f, err := os.Open(fmt.Sprintf("/proc/self/task/%d/schedstat", unix.Gettid()))
		if err != nil {
			f = nil
		}
		dead <- f
	}()
	f := <-dead
	if f == nil {
		t.Skip("no schedstat")
	}
	var buf [64]byte
	for try := 0; ; try++ {
		if k, _ := f.ReadAt(buf[:], 0); k == 0 {
			break
		}
		if try == 500 {
			t.Skip("the locked thread did not exit")
		}
		time.Sleep(time.Millisecond)
	}
	// This thread's id, its file the dead one's: as if the id had been
	// the dead thread's, and given to this one.
	for end := time.Now().Add(20 * time.Millisecond); time.Now().Before(end); {
	}
	processCPU()
	id := fmt.Sprint(unix.Gettid())
	procs.Lock()
	procs.tasks[id].Close()
	procs.tasks[id] = &taskFile{File: f}
	procs.Unlock()
	bracketed(t)
}

// bracketed checks processCPU against the files read afresh just before
// it and just after, the time it keeps for threads that exited added.
func bracketed(t *testing.T) {
	t.Helper()
	before := schedstatNow(t)
	busy, ok := processCPU()
	after := schedstatNow(t)
	gone := goneTime()
	if !ok || busy < before+gone || busy > after+gone {
		t.Fatalf("processCPU %d (ok %v), want between %d and %d (the exited threads' %d included)", busy, ok, before+gone, after+gone, gone)
	}
}

// lockedThread runs a goroutine locked to a thread of its own, computing
// for d, then reading processCPU, and returns the thread's id and a
// function that ends the goroutine. It ends locked, and takes its thread
// with it (see exited).
func lockedThread(d time.Duration) (tid int, end func()) {
	ids, done := make(chan int), make(chan struct{})
	go func() {
		runtime.LockOSThread() // not undone
		for end := time.Now().Add(d); time.Now().Before(end); {
		}
		processCPU()
		ids <- unix.Gettid()
		<-done
	}()
	return <-ids, func() { close(done) }
}

// goneTime is the time processCPU keeps for the threads that exited.
func goneTime() int64 {
	procs.Lock()
	defer procs.Unlock()
	return procs.gone
}

// TestProcessCPUKeepsTheTimeOfThreadsGone: a thread that exits takes its
// time out of its file, not out of processCPU's sum, which only grows.
func TestProcessCPUKeepsTheTimeOfThreadsGone(t *testing.T) {
	id, end := lockedThread(30 * time.Millisecond) // its file opened
	mid, _ := processCPU()                         // its 30 ms read
	end()
	exited(id)
	if _, err := os.Stat(fmt.Sprintf("/proc/self/task/%d", id)); err == nil {
		t.Skip("the locked thread did not exit")
	}
	if after, ok := processCPU(); !ok || after < mid {
		t.Fatalf("processCPU %d after a thread exited, %d before", after, mid)
	}
}
