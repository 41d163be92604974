//go:build amd64 || arm64

package ahead

// Prefetch asks the CPU to bring the line at p into its caches and goes on
// without waiting for it; an address that maps nothing is no fault.
//
//go:noescape
func Prefetch(p uintptr)
