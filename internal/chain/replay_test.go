package chain

import (
	"context"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/replay"
)

// keeper is a replay.Writer that is never written.
type keeper struct{ dns.ResponseWriter }

func (keeper) Replays() bool                                      { return true }
func (keeper) WriteMsgKeep(_, _ *dns.Msg, _ *replay.Answer) error { return nil }
func (keeper) WritePacked(*dns.Msg, *replay.Answer) (bool, error) { return true, nil }

// other wraps a writer and does something of its own with the answer.
type other struct{ dns.ResponseWriter }

// through returns the writer the last of hops plugins is given, each
// passing the query on with plugin.NextOrFailure, as the stock plugins do.
func through(w dns.ResponseWriter, hops int) dns.ResponseWriter {
	var got dns.ResponseWriter
	var h plugin.Handler = plugin.HandlerFunc(func(_ context.Context, w dns.ResponseWriter, _ *dns.Msg) (int, error) {
		got = w
		return 0, nil
	})
	for range hops {
		next := h
		h = plugin.HandlerFunc(func(ctx context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
			return plugin.NextOrFailure("stock", next, ctx, w, r)
		})
	}
	h.ServeDNS(context.Background(), w, new(dns.Msg))
	return got
}

func TestReplayWriterLooksThroughNextOrFailure(t *testing.T) {
	k := keeper{}
	for hops := range 3 {
		w := through(k, hops)
		if hops > 0 {
			if _, direct := w.(replay.Writer); direct {
				t.Fatalf("%d hops: NextOrFailure wrapped nothing: the test tests nothing", hops)
			}
		}
		if pw, ok := ReplayWriter(w); !ok || pw != replay.Writer(k) {
			t.Errorf("%d hops: %v %v, want the keeper below", hops, pw, ok)
		}
	}
	if _, ok := ReplayWriter(through(other{k}, 1)); ok {
		t.Error("looked through a writer that does something with the answer")
	}
}
