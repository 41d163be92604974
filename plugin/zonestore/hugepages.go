package zonestore

import (
	"sync"
	"time"

	"github.com/ontimedns/ontime/internal/hugeheap"
)

var collapseOnce sync.Once

// collapseHeap puts the zones loaded at the start in huge pages
// (internal/hugeheap), once a process, when every block's zones are
// loaded and before any server answers: a collapse holds the process's
// page tables for milliseconds, which queries would wait for. Versions
// loaded later stay in the pages they were built in. ONTIME_HUGE_PAGES=0
// leaves the heap as it is.
func collapseHeap() error {
	collapseOnce.Do(func() {
		if !hugeheap.Enabled() {
			return
		}
		start := time.Now()
		st, err := hugeheap.Pass()
		if err != nil {
			log.Infof("huge pages: none (%v)", err)
			return
		}
		log.Infof("huge pages: %d MiB of the heap's %d collapsed in %v", st.Collapsed*hugeheap.ChunkSize>>20, st.Heap>>20, time.Since(start).Round(time.Millisecond))
		if st.Failed > 0 {
			log.Infof("huge pages: %d MiB in use not collapsed: the kernel had no huge page free", st.Failed*hugeheap.ChunkSize>>20)
		}
	})
	return nil
}
