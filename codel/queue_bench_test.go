package codel

import (
	"fmt"
	"runtime"
	"sync/atomic"
	"testing"
)

// counter is a task that only counts that it ended and gives back its
// place among the outstanding ones.
type counter struct {
	n     *atomic.Int64
	slots chan struct{}
}

func (c counter) Run()        { c.n.Add(1); <-c.slots }
func (c counter) Drop(Reason) { c.n.Add(1); <-c.slots }

// BenchmarkQueue is the hand-off alone: submitters on every P, at most
// 1,024 queries outstanding, workers (GOMAXPROCS of them) taking and
// running an empty task; queries handed over one at a time (Submit), or
// 16 together (SubmitAll, as a socket reader hands over what one system
// call read). Run it with -cpu 1,2 to see what the one lock costs as
// cores are added.
func BenchmarkQueue(b *testing.B) {
	for _, size := range []int{1, 16} {
		b.Run(fmt.Sprintf("batch%d", size), func(b *testing.B) {
			q := New(Config{})
			defer q.Close()
			var done atomic.Int64
			slots := make(chan struct{}, 1024)
			var t Task = counter{&done, slots}
			b.ReportAllocs()
			b.ResetTimer()
			b.RunParallel(func(pb *testing.PB) {
				batch := make([]Arrived, 0, size)
				for pb.Next() {
					slots <- struct{}{}
					if batch = append(batch, Arrived{t, Now()}); len(batch) == size {
						q.SubmitAll(batch)
						batch = batch[:0]
					}
				}
				q.SubmitAll(batch)
			})
			for done.Load() < int64(b.N) {
				runtime.Gosched()
			}
			b.StopTimer()
			if st := q.Stats(); st.Drops != [numReasons]uint64{} {
				b.Fatalf("drops %v: the benchmark measures hand-offs, not drops", st.Drops)
			}
		})
	}
}

// BenchmarkController is one decision of the control law.
func BenchmarkController(b *testing.B) {
	c := &Controller{Target: target, Interval: interval}
	b.ReportAllocs()
	now := int64(0)
	for b.Loop() {
		now += 1000
		c.Drop(now, 3*ms, 10)
	}
}
