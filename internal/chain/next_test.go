package chain

import (
	"context"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/coredns/coredns/plugin/pkg/dnstest"
	"github.com/coredns/coredns/plugin/test"
	"github.com/miekg/dns"
	ot "github.com/opentracing/opentracing-go"
	"github.com/opentracing/opentracing-go/mocktracer"
)

// writer is the plugin at the end of a chain: it answers, and says which
// writer it was given.
type writer struct{ got dns.ResponseWriter }

func (h *writer) Name() string { return "writer" }
func (h *writer) ServeDNS(_ context.Context, w dns.ResponseWriter, r *dns.Msg) (int, error) {
	h.got = w
	m := new(dns.Msg)
	m.SetReply(r)
	return dns.RcodeSuccess, w.WriteMsg(m)
}

// tracker is a writer that records which plugin wrote to it, as the
// metrics plugin's recorder does.
type tracker struct {
	*dnstest.Recorder
	plugin string
}

func (t *tracker) SetPlugin(name string) { t.plugin = name }
func (t *tracker) GetPlugin() string     { return t.plugin }

var _ plugin.PluginTracker = (*tracker)(nil)

func query() *dns.Msg {
	m := new(dns.Msg)
	m.SetQuestion("example.org.", dns.TypeA)
	return m
}

// A plain writer: next gets it as it is, no wrapper.
func TestNextDirect(t *testing.T) {
	h := &writer{}
	w := dnstest.NewRecorder(&test.ResponseWriter{})
	if _, err := Next("test", h, context.Background(), w, query()); err != nil {
		t.Fatal(err)
	}
	if h.got != w {
		t.Fatalf("next got %T, want the writer itself", h.got)
	}
	if w.Msg == nil {
		t.Fatal("no answer")
	}
}

// A tracker: next gets NextOrFailure's wrapper, and the tracker learns who
// wrote, as without Next.
func TestNextTellsATracker(t *testing.T) {
	h := &writer{}
	w := &tracker{Recorder: dnstest.NewRecorder(&test.ResponseWriter{})}
	if _, err := Next("test", h, context.Background(), w, query()); err != nil {
		t.Fatal(err)
	}
	if h.got == dns.ResponseWriter(w) || w.plugin != "writer" {
		t.Fatalf("next got %T and the tracker heard %q: want the wrapper, and %q", h.got, w.plugin, "writer")
	}
}

// A traced query: a span for next, as NextOrFailure opens.
func TestNextOpensASpan(t *testing.T) {
	tr := mocktracer.New()
	span := tr.StartSpan("query")
	ctx := ot.ContextWithSpan(context.Background(), span)
	if _, err := Next("test", &writer{}, ctx, dnstest.NewRecorder(&test.ResponseWriter{}), query()); err != nil {
		t.Fatal(err)
	}
	span.Finish()
	var names []string
	for _, s := range tr.FinishedSpans() {
		names = append(names, s.OperationName)
	}
	if len(names) != 2 || names[0] != "writer" {
		t.Fatalf("spans %v, want one for the next plugin, then the query's", names)
	}
}

// No next plugin: SERVFAIL and an error, as NextOrFailure.
func TestNextNone(t *testing.T) {
	if rcode, err := Next("test", nil, context.Background(), dnstest.NewRecorder(&test.ResponseWriter{}), query()); rcode != dns.RcodeServerFailure || err == nil {
		t.Fatalf("%d %v", rcode, err)
	}
}
