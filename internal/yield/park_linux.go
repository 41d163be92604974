package yield

import (
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// parker parks on a timerfd that Go's network poller watches: the
// scheduler polls the network while the goroutine waits, and the timer
// wakes it after d, to the microsecond.
type parker struct {
	f   *os.File // nil before the first park, or when timerfd is refused
	buf [8]byte
}

func (k *parker) park(d time.Duration) {
	if k.f == nil {
		fd, err := unix.TimerfdCreate(unix.CLOCK_MONOTONIC, unix.TFD_NONBLOCK|unix.TFD_CLOEXEC)
		if err != nil {
			time.Sleep(d)
			return
		}
		k.f = os.NewFile(uintptr(fd), "yield") // non-blocking: the poller watches it
	}
	spec := unix.ItimerSpec{Value: unix.NsecToTimespec(d.Nanoseconds())}
	if err := unix.TimerfdSettime(int(k.f.Fd()), 0, &spec, nil); err != nil {
		time.Sleep(d)
		return
	}
	k.f.Read(k.buf[:]) // the expiry count; an error only means the timer is gone
}

func (k *parker) close() {
	if k.f != nil {
		k.f.Close()
		k.f = nil
	}
}
