//go:build !linux

package codel

import (
	"errors"
	"net/netip"
	"os"
)

var errNoQuietPlace = errors.New("a quiet socket is only opened on Linux")

func quietSocket(netip.AddrPort) (*os.File, error) { return nil, errNoQuietPlace }

func quietAway(*os.File) error { return nil }
