//go:build !amd64 && !arm64

package ahead

// Prefetch does nothing where there is no prefetch instruction written for
// the architecture: warming is then only the steps' own reads.
func Prefetch(uintptr) {}
