//go:build !amd64 && !arm64

package zonestore

// prefetch does nothing where there is no prefetch instruction written for
// the architecture: warming is then only the steps' own reads.
func prefetch(uintptr) {}
