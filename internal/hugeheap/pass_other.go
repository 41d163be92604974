//go:build !linux

package hugeheap

import "unsafe"

// Pass does nothing where the system is not Linux.
func Pass() (Stats, error) { return Stats{}, ErrUnsupported }

// Advise does nothing where the system is not Linux.
func Advise(unsafe.Pointer, uintptr) {}
