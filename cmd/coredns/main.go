// Command coredns is the ontime build of CoreDNS: CoreDNS's own main with the
// plugins of plugin.cfg compiled in (zplugin.go, generated).
package main

//go:generate go run ../../tools/gendirectives -cfg ../../plugin.cfg -out zplugin.go

import (
	"github.com/coredns/caddy"
	"github.com/coredns/coredns/coremain"
)

// Version is ontime's release; set with -ldflags "-X main.Version=..." by the Makefile.
var Version = "0.1.0-dev"

func main() {
	// coremain's init set these to CoreDNS's; -version prints them.
	caddy.AppName = "ontime"
	caddy.AppVersion = Version + " (CoreDNS-" + coremain.CoreVersion + ")"
	coremain.Run()
}
