//go:build !linux

package connlimit

import "errors"

// Supported says whether this system can tell an open connection from a
// closed one (Kernel.Alive); where it cannot, the limit is not applied.
const Supported = false

// Kernel would ask the system about one connection; only Linux's sock_diag
// is known here.
type Kernel struct{}

// NewKernel fails: no sock_diag on this system.
func NewKernel() (*Kernel, error) { return nil, errors.New("connlimit: Linux only") }

// Close does nothing.
func (k *Kernel) Close() error { return nil }

// Alive is never asked: NewKernel fails.
func (k *Kernel) Alive(Conn) (bool, error) { return true, errors.New("connlimit: Linux only") }
