//go:build !linux

package codel

import "errors"

// The reader only runs on Linux (socket_other.go): these are never called.

var errNoMmsg = errors.New("recvmmsg and sendmmsg are Linux's")

func recvmmsg(uintptr, []mmsghdr) (int, error) { return 0, errNoMmsg }
func sendmmsg(uintptr, []mmsghdr) (int, error) { return 0, errNoMmsg }
