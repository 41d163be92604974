package test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/ontimedns/ontime/internal/freeport"
)

// TestReadmeCorefiles starts the binary with every Corefile example of
// every plugin README (the `~~~ corefile` blocks) and of the top README's
// walkthrough, moved to loopback: the
// listener on a free port of 127.0.0.1, the metrics on another, primaries
// and upstreams on 127.0.0.1, the files they name written into a
// directory of their own. Each must start and, if it serves example.org,
// answer for it. An example that stops parsing, or names a directive the
// binary lacks, fails here.
func TestReadmeCorefiles(t *testing.T) {
	readmes, _ := filepath.Glob(filepath.Join(repoRoot(t), "plugin", "*", "README.md"))
	block := regexp.MustCompile("(?s)~~~ corefile\n(.*?)~~~")
	n := 0
	for _, readme := range readmes {
		b, err := os.ReadFile(readme)
		if err != nil {
			t.Fatal(err)
		}
		for i, m := range block.FindAllStringSubmatch(string(b), -1) {
			n++
			name := fmt.Sprintf("%s/%d", filepath.Base(filepath.Dir(readme)), i+1)
			t.Run(name, func(t *testing.T) { runExample(t, m[1]) })
		}
	}
	// And the walkthrough of the top README.
	b, err := os.ReadFile(filepath.Join(repoRoot(t), "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	for i, m := range regexp.MustCompile("(?s)\x60\x60\x60\n(example\\.org \\{\n.*?)\x60\x60\x60").FindAllStringSubmatch(string(b), -1) {
		n++
		t.Run(fmt.Sprintf("README/%d", i+1), func(t *testing.T) { runExample(t, m[1]) })
	}
	if n < 8 {
		t.Fatalf("found %d examples", n)
	}
}

func runExample(t *testing.T, corefile string) {
	root := t.TempDir()
	org := zoneText("example.org", 1, "www A 192.0.2.1")
	os.WriteFile(filepath.Join(root, "db.example.org"), []byte(org), 0o644)
	os.WriteFile(filepath.Join(root, "db.example.net.signed"), []byte(zoneText("example.net", 1, "www A 192.0.2.2")), 0o644)
	zones := filepath.Join(root, "zones")
	os.Mkdir(zones, 0o755)
	os.WriteFile(filepath.Join(zones, "db.example.org"), []byte(org), 0o644)
	_, _, base := newKey(t, root, "example.org.")
	for _, ext := range []string{".key", ".private"} {
		os.Symlink(base+ext, filepath.Join(root, "Kexample.org.+013+12345"+ext))
	}

	port := freeport.Get(t)
	c := regexp.MustCompile(`(?m)^(\S+) \{$`).ReplaceAllString(corefile, fmt.Sprintf("$1:%d {", port))
	c = regexp.MustCompile(`(?m)^(\s+)bind \S+$`).ReplaceAllString(c, "${1}bind 127.0.0.1")
	if !strings.Contains(c, "bind ") {
		c = strings.Replace(c, "{\n", "{\n    bind 127.0.0.1\n", 1)
	}
	c = regexp.MustCompile(`(?m)^(\s+)prometheus$`).ReplaceAllString(c, fmt.Sprintf("${1}prometheus 127.0.0.1:%d", freeport.Get(t)))
	c = regexp.MustCompile(`(?m)^(\s+)ready$`).ReplaceAllString(c, fmt.Sprintf("${1}ready 127.0.0.1:%d", freeport.Get(t)))
	c = strings.NewReplacer(
		"/etc/zones", zones,
		"/var/lib/ontime", filepath.Join(root, "lib"),
		"192.0.2.1 192.0.2.2:5300", "127.0.0.1:9", // primaries: nowhere but loopback
	).Replace(c)
	path := filepath.Join(root, "Corefile")
	os.WriteFile(path, []byte(c), 0o644)
	cmd := exec.Command(corednsBin, "-conf", path)
	cmd.Dir = root
	var wait []string
	if strings.Contains(c, "zonestore") {
		wait = append(wait, "example.org")
	}
	s := start(t, "coredns", cmd, port, wait...)
	if len(wait) > 0 {
		if got := answerA(t, s.addr, "www.example.org."); got != "192.0.2.1" {
			t.Fatalf("www.example.org: %s\nCorefile:\n%s", got, c)
		}
	}
}
