// Package stockerrors stands in for the stock errors plugin's handler,
// where it is configured without consolidate, in the chains codel serves.
//
// The stock handler calls the next plugin through plugin.NextOrFailure,
// which in CoreDNS 1.15 wraps the writer for every query: one allocation
// a query, and a writer no plugin below knows. zonestore's replay
// (plugin/zonestore/README.md) first found no writer that could write a
// kept answer beside it, and `errors` is in Corefile.example and in the
// Kubernetes example: neither replayed an answer. The replay writers now
// look through that wrapper (internal/chain's ReplayWriter), wherever a
// stock plugin puts it; what this Handler still saves is the allocation:
// with `errors` in the chain, 1.04 to 1.12 times the queries a second and
// 229 to 250 MB of peak memory against 288 to 320 (bench/README.md). It
// does what the stock one does without patterns, through internal/chain's
// Next, which wraps nothing where no writer tracks the plugin that wrote.
package stockerrors

import (
	"context"
	"reflect"

	"github.com/coredns/coredns/plugin"
	clog "github.com/coredns/coredns/plugin/pkg/log"
	"github.com/coredns/coredns/request"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/chain"
)

const name = "errors"

// log is the stock plugin's own logger: the lines read as they did.
var log = clog.NewWithPlugin(name)

// Wrap returns next, or, where next is the stock errors plugin with no
// consolidate pattern, a Handler in its place. The plugins that can come
// just before errors in plugin.cfg's order (codel, rrl, prometheus's
// stand-in) wrap their next plugin with it.
func Wrap(next plugin.Handler) plugin.Handler {
	if next == nil || next.Name() != name {
		return next
	}
	// The stock handler's type is unexported: its fields are read by
	// name. A CoreDNS whose handler has them no longer keeps it.
	v := reflect.ValueOf(next)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return next
	}
	patterns, inner := v.Elem().FieldByName("patterns"), v.Elem().FieldByName("Next")
	if !patterns.IsValid() || patterns.Kind() != reflect.Slice || patterns.Len() != 0 || !inner.IsValid() || !inner.CanInterface() {
		return next // consolidate counts and logs the errors it matches: the stock handler's
	}
	n, ok := inner.Interface().(plugin.Handler)
	if !ok {
		return next
	}
	return &Handler{next: n}
}

// Handler is the stock errors plugin without consolidate patterns.
type Handler struct {
	next plugin.Handler
}

// Name implements plugin.Handler.
func (h *Handler) Name() string { return name }

// ServeDNS implements plugin.Handler: the next plugin's error, logged as
// the stock handler logs one that matches no pattern.
func (h *Handler) ServeDNS(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	rcode, err := chain.Next(name, h.next, ctx, w, r)
	if err != nil {
		state := request.Request{W: w, Req: r}
		log.Errorf("%d %s %s: %s", rcode, state.Name(), state.Type(), err.Error())
	}
	return rcode, err
}
