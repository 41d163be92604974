//go:build !linux

package codel

import (
	"errors"
	"net"
)

// incomingCPU is Linux's alone: elsewhere CoreDNS's listener serves TCP.
const incomingCPU = false

func listenOnCPU(string, int) (net.Listener, error) {
	return nil, errors.New("codel: TCP listeners of its own are Linux only")
}

func possibleCPUs() int { return 0 }

func steersByCPU() bool { return false }
