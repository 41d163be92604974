// Command coredns is the ontime build of CoreDNS: CoreDNS's own main with the
// plugins of plugin.cfg compiled in (zplugin.go, generated).
package main

//go:generate go run ../../tools/gendirectives -cfg ../../plugin.cfg -out zplugin.go

import (
	"fmt"
	"os"
	"strconv"

	"github.com/coredns/caddy"
	"github.com/coredns/coredns/coremain"

	"github.com/ontimedns/ontime/internal/gcpace"
)

// Version is ontime's release; set with -ldflags "-X main.Version=..." by the Makefile.
var Version = "0.1.0-dev"

func main() {
	// coremain's init set these to CoreDNS's; -version prints them.
	caddy.AppName = "ontime"
	caddy.AppVersion = Version + " (CoreDNS-" + coremain.CoreVersion + ")"
	headroom, err := gcHeadroom()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	go gcpace.Run(headroom, nil)
	coremain.Run()
}

// defaultHeadroomMB is the heap headroom, in MiB, that ontime gives the
// garbage collector unless ONTIME_GC_HEADROOM_MB or GOGC says otherwise
// (internal/gcpace; README.md, "Memory and latency").
const defaultHeadroomMB = 256

func gcHeadroom() (uint64, error) {
	v := os.Getenv("ONTIME_GC_HEADROOM_MB")
	if v == "" {
		return defaultHeadroomMB << 20, nil
	}
	mb, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, fmt.Errorf("ONTIME_GC_HEADROOM_MB=%q: want a whole number of MiB (0: Go's own pacing)", v)
	}
	return mb << 20, nil
}
