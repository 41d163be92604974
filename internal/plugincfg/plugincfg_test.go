package plugincfg

import (
	"strings"
	"testing"
)

func TestParse(t *testing.T) {
	ps, err := Parse(strings.NewReader("# c\nroot:root\n\nzonestore:github.com/x/y\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 2 || ps[0].Package != "github.com/coredns/coredns/plugin/root" || ps[1].Package != "github.com/x/y" {
		t.Fatalf("got %+v", ps)
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"root\n", "root:root\nroot:root\n", ":x\n"} {
		if _, err := Parse(strings.NewReader(in)); err == nil {
			t.Errorf("Parse(%q): want error", in)
		}
	}
}
