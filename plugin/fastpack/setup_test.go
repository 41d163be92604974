package fastpack

import (
	"testing"

	"github.com/coredns/caddy"
)

func TestSetup(t *testing.T) {
	for in, ok := range map[string]bool{
		"fastpack":          true,
		"fastpack extra":    false,
		"fastpack {\n x\n}": false,
		"fastpack {\n}":     true,
	} {
		if err := setup(caddy.NewTestController("dns", in)); (err == nil) != ok {
			t.Errorf("%q: err %v, want ok=%v", in, err, ok)
		}
	}
}
