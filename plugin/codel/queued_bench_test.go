package codel

import (
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/internal/ahead"
)

// BenchmarkQueuedChain is the server in process: the full chain run by
// codel's workers off its one queue, fed as the socket reader feeds it (a
// worker, before it takes a query, queues a batch of up to 32 that "arrived"),
// its answers packed and thrown away where the socket would take them. It
// is ChainParallel with the queue's hand-off in the way: run it with
// -cpu 1,2 to see whether the hand-off lets the server scale.
//
//	go test -run XXX -bench QueuedChain -benchmem -cpu 1,2 ./plugin/codel/
func BenchmarkQueuedChain(b *testing.B) {
	s, packed := chainServer(b, chains[0].body, false)
	b.Run("warmed", func(b *testing.B) { queuedChain(b, s, packed, true) })
	b.Run("not-warmed", func(b *testing.B) { queuedChain(b, s, packed, false) })
}

// BenchmarkQueuedChainCold is QueuedChain over the load test's 200,000
// queries (see ChainCold), with the workers warming the hands they take
// (codel.Config.Warm) and without. Every answer is kept (replay) before
// either runs: the first to run kept them, and its time was the misses'.
func BenchmarkQueuedChainCold(b *testing.B) {
	s, packed := chainServerQueries(b, chains[0].body, false, 200000)
	room := new(nameRoom)
	for _, m := range packed {
		serveOne(s, m, sink{}, room)
	}
	b.Run("warmed", func(b *testing.B) { queuedChain(b, s, packed, true) })
	b.Run("not-warmed", func(b *testing.B) { queuedChain(b, s, packed, false) })
}

// queuedChain serves packed off a queue, its workers warming the hands
// they take where warm is set.
func queuedChain(b *testing.B, s *packetContext, packed [][]byte, warm bool) {
	var dropped atomic.Int64 // counted as done: the check after the run fails the benchmark
	tasks := make([]queuedQuery, len(packed))
	for i, m := range packed {
		tasks[i] = queuedQuery{s: s, m: m, dropped: &dropped}
	}
	var (
		feeding   atomic.Bool
		submitted atomic.Int64 // written once a batch, by the one feeding worker
		mu        sync.Mutex   // taken once a batch, and for each worker started
		locals    []*queuedLocal
		queue     atomic.Pointer[codel.Queue] // set once New returns: its workers feed from their start
	)
	n := int64(b.N)
	done := func() (sum int64) {
		mu.Lock()
		defer mu.Unlock()
		sum = dropped.Load()
		for _, l := range locals {
			sum += l.served.Load()
		}
		return sum
	}
	feed := func() {
		q := queue.Load()
		if q == nil || !feeding.CompareAndSwap(false, true) {
			return
		}
		defer feeding.Store(false)
		for range feedBatches {
			from := submitted.Load()
			if from-done() >= 256 || from >= n { // at most 256 outstanding, as a socket's buffer holds
				return
			}
			var room [batch]codel.Arrived
			now := codel.Now()
			k := min(int64(batch), n-from)
			for i := range k {
				t := &tasks[int(from+i)%len(tasks)]
				t.note, t.qend = ahead.Note{}, 0
				room[i] = codel.Arrived{Task: t, Arrival: now}
			}
			submitted.Store(from + k)
			q.SubmitAll(room[:k])
		}
	}
	b.ReportAllocs()
	b.ResetTimer()
	// Workers: GOMAXPROCS, and any the queue adds (it takes a worker
	// preempted inside a query for long for a blocked one).
	cfg := codel.Config{Feed: func(int, codel.Source) { feed() }, Local: func() codel.Local {
		l := new(queuedLocal)
		mu.Lock()
		locals = append(locals, l)
		mu.Unlock()
		return l
	}}
	if warm {
		cfg.Warm = func(t codel.Task) bool {
			q := t.(*queuedQuery)
			return warmQuery(s.route.warmer, &q.note, &q.qend, q.m)
		}
	}
	q := codel.New(cfg)
	queue.Store(q)
	feed() // the first batch; workers feed the rest
	for done() < n {
		// Asleep, not holding a P the workers need, and then feeding, as
		// the reader's own goroutine does when the socket turns readable
		// while every worker waits: a worker whose feed found another
		// feeding parks without feeding again.
		time.Sleep(100 * time.Microsecond)
		feed()
	}
	b.StopTimer()
	q.Close()
	if st := q.Stats(); st.Drops != [len(codel.Reasons)]uint64{} {
		b.Fatalf("drops %v: the benchmark measures serving, not dropping", st.Drops)
	}
}

// queuedQuery is a query of the mix as a task of the queue.
type queuedQuery struct {
	s       *packetContext
	m       []byte
	dropped *atomic.Int64
	note    ahead.Note
	qend    int
}

func (t *queuedQuery) Run()               { panic("run without a worker's Local") }
func (t *queuedQuery) Drop(codel.Reason)  { t.dropped.Add(1) }
func (t *queuedQuery) OnlyComputes() bool { return true } // as a recycled packet's
func (t *queuedQuery) RunLocal(l codel.Local, _ int64) {
	ql := l.(*queuedLocal)
	serveOne(t.s, t.m, sink{}, &ql.room)
	ql.served.Add(1)
}

// queuedLocal is a worker's own: its name room and its count of queries
// served, on lines no other worker writes.
type queuedLocal struct {
	room   nameRoom
	served atomic.Int64
	_      [64]byte
}

func (*queuedLocal) Flush() {}
