package main

import (
	"bytes"
	"os"
	"testing"

	"github.com/ontimedns/ontime/internal/plugincfg"
)

// TestGeneratedMatchesPluginCfg fails when plugin.cfg changed and `make generate` was not run.
func TestGeneratedMatchesPluginCfg(t *testing.T) {
	f, err := os.Open("../../plugin.cfg")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	plugins, err := plugincfg.Parse(f)
	if err != nil {
		t.Fatal(err)
	}
	want, err := plugincfg.Render(plugins)
	if err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile("zplugin.go")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatal("cmd/coredns/zplugin.go does not match plugin.cfg: run `make generate`")
	}
	// The order is the contract: zonestore stands where stock file stands, before file.
	idx := map[string]int{}
	for i, p := range plugins {
		idx[p.Name] = i
	}
	if idx["zonestore"] == 0 || idx["zonestore"]+1 != idx["file"] {
		t.Fatalf("zonestore must stand right before file in plugin.cfg, got zonestore=%d file=%d", idx["zonestore"], idx["file"])
	}
}
