package yield

import (
	"net"
	"runtime"
	"slices"
	"sync/atomic"
	"testing"
)

// work is a small piece of computing, tens of nanoseconds.
func work(seed uint64) uint64 {
	for i := 0; i < 300; i++ {
		seed = seed*6364136223846793005 + 1442695040888963407
	}
	return seed
}

// ticksUntilServed computes on the only P, sending one datagram at a time
// to a goroutine that waits for it on a socket, and returns the median
// of the pieces of work done before that goroutine had read one (a
// machine busy with other tests may delay one datagram). The measure is
// work, not time: the test asserts that the reader is served within a few
// slices, not how long a slice takes.
func ticksUntilServed(t *testing.T, tick func()) int {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	in, err := net.ListenUDP("udp", &net.UDPAddr{IP: net.IPv4(127, 0, 0, 1)})
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := net.DialUDP("udp", nil, in.LocalAddr().(*net.UDPAddr))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	var read atomic.Int64
	go func() {
		buf := make([]byte, 16)
		for {
			if _, err := in.Read(buf); err != nil {
				return
			}
			read.Add(1)
		}
	}()
	var counts []int
	var sink uint64
	for i := int64(1); i <= 21; i++ {
		if _, err := out.Write([]byte("q")); err != nil {
			t.Fatal(err)
		}
		n := 0
		for read.Load() < i {
			sink = work(sink)
			tick()
			n++
		}
		counts = append(counts, n)
	}
	slices.Sort(counts)
	return counts[len(counts)/2]
}

func TestTickLetsWaitingSocketsRun(t *testing.T) {
	var p Pacer
	defer p.Close()
	paced := ticksUntilServed(t, p.Tick)
	unpaced := ticksUntilServed(t, func() {})
	t.Logf("pieces of work done before the reader ran: %d paced, %d unpaced", paced, unpaced)
	// A slice is 200 µs; Go's own look at the network, without the pacer,
	// comes after 10 ms (sysmon): 50 times as much work. The test wants at
	// most a tenth of that, measured in the same run.
	if paced*10 > unpaced {
		t.Errorf("a datagram waited %d pieces of work with the pacer and %d without: want at most a tenth", paced, unpaced)
	}
}

func TestNilAndClosedPacers(t *testing.T) {
	var nilPacer *Pacer
	nilPacer.Tick()
	nilPacer.Close()
	var p Pacer
	for i := 0; i < 100000; i++ {
		p.Tick()
	}
	p.Close()
	p.Close()
	p.Tick()
}
