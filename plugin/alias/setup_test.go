package alias

import (
	"testing"
	"time"

	"github.com/coredns/caddy"
)

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in        string
		ok        bool
		upstreams []string
		check     func(*Alias) bool
	}{
		{"alias {\n upstream 127.0.0.1:5300 [::1]\n}", true, []string{"127.0.0.1:5300", "[::1]:53"}, func(a *Alias) bool {
			return a.cfg.Timeout == 0 && a.cfg.Pool == 0 && a.cfg.ServeStale == 0 && !a.onWorker
		}},
		{"alias {\n upstream 127.0.0.1\n timeout 100ms\n pool 8\n queue 16\n serve_stale 1h\n on_worker\n}", true, []string{"127.0.0.1:53"}, func(a *Alias) bool {
			return a.cfg.Timeout == 100*time.Millisecond && a.cfg.Pool == 8 && a.cfg.Queue == 16 && a.cfg.ServeStale == time.Hour && a.onWorker
		}},
		{"alias", false, nil, nil},                                        // no upstream
		{"alias extra {\n upstream 127.0.0.1\n}", false, nil, nil},        // arguments
		{"alias {\n upstream\n}", false, nil, nil},                        // no address
		{"alias {\n upstream not..an..address\n}", false, nil, nil},       // bad address
		{"alias {\n upstream 127.0.0.1\n timeout 0s\n}", false, nil, nil}, // not positive
		{"alias {\n upstream 127.0.0.1\n pool many\n}", false, nil, nil},
		{"alias {\n upstream 127.0.0.1\n queue -1\n}", false, nil, nil},
		{"alias {\n upstream 127.0.0.1\n serve_stale\n}", false, nil, nil},
		{"alias {\n upstream 127.0.0.1\n on_worker yes\n}", false, nil, nil},
		{"alias {\n upstream 127.0.0.1\n cache 100\n}", false, nil, nil}, // unknown
	} {
		a, err := parseAlias(caddy.NewTestController("dns", c.in))
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok %v", c.in, err, c.ok)
			continue
		}
		if !c.ok {
			continue
		}
		if len(a.cfg.Upstreams) != len(c.upstreams) {
			t.Errorf("%q: upstreams %v, want %v", c.in, a.cfg.Upstreams, c.upstreams)
			continue
		}
		for i := range c.upstreams {
			if a.cfg.Upstreams[i] != c.upstreams[i] {
				t.Errorf("%q: upstreams %v, want %v", c.in, a.cfg.Upstreams, c.upstreams)
			}
		}
		if !c.check(a) {
			t.Errorf("%q: parsed %+v", c.in, a.cfg)
		}
	}
}
