//go:build !linux

package hugeheap

// Pass does nothing where the system is not Linux.
func Pass() (Stats, error) { return Stats{}, ErrUnsupported }
