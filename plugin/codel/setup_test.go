package codel

import (
	"runtime"
	"testing"
	"time"

	"github.com/coredns/caddy"
	"github.com/miekg/dns"
)

func TestParseTCPLimits(t *testing.T) {
	for _, c := range []struct {
		in                  string
		perClient, tcpConns int
	}{
		{"codel", defaultTCPPerClient, defaultTCPConns},
		{"codel {\n tcp_per_client 3\n tcp_conns 100\n}", 3, 100},
		{"codel {\n tcp_per_client 0\n}", 0, defaultTCPConns},
		{"codel {\n tcp_conns 0\n}", defaultTCPPerClient, 0},
	} {
		_, opts, err := parse(caddy.NewTestController("dns", c.in))
		if err != nil || opts.tcpPerClient != c.perClient || opts.tcpConns != c.tcpConns {
			t.Errorf("%q: %d per client, %d in all, %v; want %d, %d", c.in, opts.tcpPerClient, opts.tcpConns, err, c.perClient, c.tcpConns)
		}
	}
}

func TestParse(t *testing.T) {
	for _, c := range []struct {
		in   string
		ok   bool
		want func(t *testing.T, target, interval, deadline time.Duration, workers, maxWorkers, queue, drop int)
	}{
		{"codel", true, func(t *testing.T, target, interval, deadline time.Duration, workers, maxWorkers, queue, drop int) {
			if target != 0 || workers != 0 || drop != dropSilent {
				t.Errorf("no block: want every default (0) and a silent drop; got target %v workers %d drop %d", target, workers, drop)
			}
		}},
		{"codel {\n target 10ms\n interval 200ms\n deadline 1s\n workers 3\n max_workers 9\n queue 100\n drop servfail\n}", true,
			func(t *testing.T, target, interval, deadline time.Duration, workers, maxWorkers, queue, drop int) {
				if target != 10*time.Millisecond || interval != 200*time.Millisecond || deadline != time.Second ||
					workers != 3 || maxWorkers != 9 || queue != 100 || drop != dns.RcodeServerFailure {
					t.Errorf("got %v %v %v %d %d %d %d", target, interval, deadline, workers, maxWorkers, queue, drop)
				}
			}},
		{"codel {\n drop refused\n}", true, func(t *testing.T, _, _, _ time.Duration, _, _, _, drop int) {
			if drop != dns.RcodeRefused {
				t.Errorf("drop %d", drop)
			}
		}},
		{"codel {\n fifo\n}", true, nil},
		{"codel {\n socket off\n}", true, nil},
		{"codel {\n socket maybe\n}", false, nil},
		{"codel {\n tcp_listeners off\n}", true, nil},
		{"codel {\n tcp_listeners no\n}", false, nil},
		{"codel extra", false, nil},
		{"codel {\n target 0s\n}", false, nil},
		{"codel {\n target soon\n}", false, nil},
		{"codel {\n workers -1\n}", false, nil},
		{"codel {\n queue 1 2\n}", false, nil},
		{"codel {\n drop loudly\n}", false, nil},
		{"codel {\n target 200ms\n interval 100ms\n}", false, nil},
		{"codel {\n workers 8\n max_workers 4\n}", false, nil},
		{"codel {\n lifo\n}", false, nil},
		{"codel {\n fifo on\n}", false, nil},
		{"codel\ncodel", false, nil},
		{"codel {\n tcp_per_client -1\n}", false, nil},
		{"codel {\n tcp_conns many\n}", false, nil},
		{"codel {\n sockets 0\n}", false, nil},
		{"codel {\n sockets four\n}", false, nil},
	} {
		cfg, opts, err := parse(caddy.NewTestController("dns", c.in))
		if (err == nil) != c.ok {
			t.Errorf("%q: err %v, want ok=%v", c.in, err, c.ok)
			continue
		}
		if c.want != nil {
			c.want(t, cfg.Target, cfg.Interval, cfg.Deadline, cfg.Workers, cfg.MaxWorkers, cfg.Capacity, opts.drop)
		}
	}
}

// TestParseTCPListeners: on unless turned off.
func TestParseTCPListeners(t *testing.T) {
	for in, want := range map[string]bool{"codel": true, "codel {\n tcp_listeners off\n}": false, "codel {\n tcp_listeners on\n}": true} {
		_, opts, err := parse(caddy.NewTestController("dns", in))
		if err != nil || opts.tcpListeners != want {
			t.Errorf("%q: tcp_listeners %v, %v; want %v", in, opts.tcpListeners, err, want)
		}
	}
}

// TestParseSockets: sockets defaults to one per core (GOMAXPROCS), and
// takes a positive number.
func TestParseSockets(t *testing.T) {
	for in, want := range map[string]int{"codel": runtime.GOMAXPROCS(0), "codel {\n sockets 3\n}": 3} {
		_, opts, err := parse(caddy.NewTestController("dns", in))
		if err != nil || opts.sockets != want {
			t.Errorf("%q: sockets %d, %v; want %d", in, opts.sockets, err, want)
		}
	}
}
