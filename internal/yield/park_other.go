//go:build !linux

package yield

import "time"

// parker sleeps: the goroutine parks, and the scheduler polls the network
// while it does.
type parker struct{}

func (parker) park(d time.Duration) { time.Sleep(d) }
func (parker) close()               {}
