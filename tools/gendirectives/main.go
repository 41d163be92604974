// Command gendirectives writes cmd/coredns/zplugin.go from plugin.cfg.
//
//	go run ./tools/gendirectives -cfg plugin.cfg -out cmd/coredns/zplugin.go
package main

import (
	"flag"
	"log"
	"os"

	"github.com/ontimedns/ontime/internal/plugincfg"
)

func main() {
	cfg := flag.String("cfg", "plugin.cfg", "plugin list to read")
	out := flag.String("out", "cmd/coredns/zplugin.go", "Go file to write")
	flag.Parse()

	f, err := os.Open(*cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer f.Close()
	plugins, err := plugincfg.Parse(f)
	if err != nil {
		log.Fatal(err)
	}
	src, err := plugincfg.Render(plugins)
	if err != nil {
		log.Fatal(err)
	}
	if err := os.WriteFile(*out, src, 0o644); err != nil {
		log.Fatal(err)
	}
}
