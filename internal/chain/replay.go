package chain

import (
	"context"
	"reflect"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/replay"
)

// ReplayWriter returns w as a replay.Writer, looking through the writers
// CoreDNS's plugin.NextOrFailure wraps around a query's writer at every
// hop. Stock plugins that only pass a query on call it (any, acl, bufsize,
// chaos, cancel), and its wrapper (one allocation a query) does nothing
// but tell a plugin.PluginTracker below it which plugin wrote; no
// replay.Writer is one. Without looking through it, one such plugin in a
// chain kept every answer from being kept. A wrapper of any other kind
// (log's recorder, nsid's, minimal's) is not looked through: it does
// something with the answer. Every replay.Writer asks it for the writer
// below it, and zonestore for the one above.
func ReplayWriter(w dns.ResponseWriter) (replay.Writer, bool) {
	for {
		if pw, ok := w.(replay.Writer); ok {
			return pw, true
		}
		if trackerType == nil || reflect.TypeOf(w) != trackerType {
			return nil, false
		}
		inner, ok := reflect.ValueOf(w).Elem().Field(0).Interface().(dns.ResponseWriter)
		if _, tracker := inner.(plugin.PluginTracker); !ok || tracker {
			return nil, false
		}
		w = inner
	}
}

// trackerType is the type of the writer plugin.NextOrFailure wraps around
// a query's writer, read off a call: a pointer to a struct whose first
// field is the writer it wraps. nil where NextOrFailure wraps none, or one
// of another shape (a CoreDNS other than 1.15's): nothing is looked
// through then.
var trackerType = func() reflect.Type {
	w := &probeWriter{}
	var got reflect.Type
	plugin.NextOrFailure("chain", plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, _ *dns.Msg) (int, error) {
		got = reflect.TypeOf(w)
		return dns.RcodeSuccess, nil
	}), context.Background(), w, new(dns.Msg))
	writer := reflect.TypeOf((*dns.ResponseWriter)(nil)).Elem()
	if got == nil || got == reflect.TypeOf(w) || got.Kind() != reflect.Pointer || got.Elem().Kind() != reflect.Struct ||
		got.Elem().NumField() == 0 || got.Elem().Field(0).Type != writer || !got.Elem().Field(0).IsExported() {
		return nil
	}
	return got
}()

// probeWriter is the writer trackerType hands NextOrFailure: never written.
type probeWriter struct{ dns.ResponseWriter }
