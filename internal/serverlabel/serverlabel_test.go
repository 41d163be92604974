package serverlabel

import (
	"testing"

	"github.com/coredns/coredns/core/dnsserver"
)

func TestOf(t *testing.T) {
	for _, c := range []struct {
		hosts []string
		want  string
	}{
		{nil, "dns://:53"},
		{[]string{""}, "dns://:53"},
		{[]string{"127.0.0.1"}, "dns://127.0.0.1:53"},
		{[]string{"::1", "127.0.0.1"}, "dns://[::1]:53"},
	} {
		if got := Of(&dnsserver.Config{Transport: "dns", Port: "53", ListenHosts: c.hosts}); got != c.want {
			t.Errorf("%v: %q, want %q", c.hosts, got, c.want)
		}
	}
}
