package codel

import (
	"net"
	"sync"
	"sync/atomic"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/pires/go-proxyproto"

	"github.com/ontimedns/ontime/codel"
	"github.com/ontimedns/ontime/connlimit"
)

// tcpLimit bounds the TCP connections of one server address (connlimit).
//
// CoreDNS's listener has one hook on accept: the connection policy it was
// given for the PROXY protocol, asked with the client's and the server's
// addresses of each connection before miekg/dns serves it, and which may
// refuse it (ErrInvalidUpstream: closed, and the listener goes on). codel
// sets that hook, in front of any policy the proxyproto plugin set.
//
// A wrapped listener has no file for caddy to hand over, so a reloaded
// server opens a listener of its own while the old one serves its last
// connections. The table lives here, by address, across instances: both
// listeners count against the same connections, and the new bounds apply
// to it at once. The instance of the current Corefile counts the
// refusals among its drops; once none holds the address (a Corefile
// without codel), the old listener refuses nothing either.
type tcpLimit struct {
	limiter *connlimit.Limiter
	owner   atomic.Pointer[Codel]
}

var tcpLimits = struct {
	sync.Mutex
	m map[string]*tcpLimit
	// alone are the server blocks whose connection policy is codel's
	// alone: none was set before it (the proxyproto plugin's).
	alone map[*dnsserver.Config]bool
}{m: map[string]*tcpLimit{}, alone: map[*dnsserver.Config]bool{}}

// proxied says whether a block of s reads the PROXY protocol on its TCP
// connections (a connection policy not codel's alone): codel's own
// listeners, which do not, then leave TCP to CoreDNS's (tcplisten.go).
func proxied(s *dnsserver.Server) bool {
	tcpLimits.Lock()
	defer tcpLimits.Unlock()
	configs := configsOf(s)
	if configs == nil {
		return true // not known: as if
	}
	for _, cfg := range configs {
		if cfg.ProxyProtoConnPolicy != nil && !tcpLimits.alone[cfg] {
			return true
		}
	}
	return false
}

// limitTCP applies the limits to the server address of config, counted
// by h, until release.
func limitTCP(config *dnsserver.Config, h *Codel, perClient, max int) (release func(), err error) {
	tcpLimits.Lock()
	t := tcpLimits.m[h.server]
	if t == nil {
		k, err := connlimit.NewKernel()
		if err != nil {
			tcpLimits.Unlock()
			return nil, err
		}
		t = &tcpLimit{limiter: connlimit.New(perClient, max, k.Alive)}
		tcpLimits.m[h.server] = t
	}
	tcpLimits.Unlock()
	t.limiter.SetLimits(perClient, max)
	t.owner.Store(h)

	next := config.ProxyProtoConnPolicy
	if next == nil {
		tcpLimits.Lock()
		tcpLimits.alone[config] = true
		tcpLimits.Unlock()
	}
	config.ProxyProtoConnPolicy = func(o proxyproto.ConnPolicyOptions) (proxyproto.Policy, error) {
		if t.refuse(o) {
			return proxyproto.REJECT, proxyproto.ErrInvalidUpstream
		}
		if next != nil {
			return next(o)
		}
		return proxyproto.SKIP, nil // a plain connection, no PROXY header
	}
	return func() {
		t.owner.CompareAndSwap(h, nil)
		tcpLimits.Lock()
		delete(tcpLimits.alone, config)
		tcpLimits.Unlock()
	}, nil
}

// release drops an admitted connection, closed by the server, from the
// table (codel's own listeners see their connections close).
func (t *tcpLimit) release(client, local net.Addr) {
	c, ok := client.(*net.TCPAddr)
	l, ok2 := local.(*net.TCPAddr)
	if ok && ok2 {
		t.limiter.Release(connlimit.Conn{Client: c.AddrPort(), Local: l.AddrPort()})
	}
}

// refuse decides on a connection (or, for UDP, a datagram: the same policy
// is asked, and passes it).
func (t *tcpLimit) refuse(o proxyproto.ConnPolicyOptions) bool {
	client, ok := o.Upstream.(*net.TCPAddr)
	local, ok2 := o.Downstream.(*net.TCPAddr)
	h := t.owner.Load()
	if !ok || !ok2 || h == nil {
		return false
	}
	v := t.limiter.Admit(connlimit.Conn{Client: client.AddrPort(), Local: local.AddrPort()})
	if v == connlimit.Admitted {
		return false
	}
	h.q.Refused(codel.TCPConns)
	log.Debugf("TCP connection from %s refused: %s", client, v)
	return true
}
