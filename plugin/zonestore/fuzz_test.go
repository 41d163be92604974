package zonestore

import (
	"context"
	"strings"
	"testing"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
	aliasplugin "github.com/ontimedns/ontime/plugin/alias"
	"github.com/ontimedns/ontime/plugin/fastpack"
	"github.com/ontimedns/ontime/zonestore"
)

// captureWriter keeps the bytes of the last answer.
type captureWriter struct {
	packWriter
	out []byte
}

func (w *captureWriter) Write(b []byte) (int, error) {
	w.out = append(w.out[:0], b...)
	return len(b), nil
}

// FuzzQueryThroughTheChain: any packet that unpacks as a query goes
// through fastpack, alias and zonestore in process, as the server runs
// them; the chain never panics, and what it writes is a DNS message that
// unpacks, with the query's ID.
func FuzzQueryThroughTheChain(f *testing.F) {
	z, err := zonestore.Parse(strings.NewReader(workload.Zone(200)+"aliased 300 ALIAS host1.bench.example.\n"), workload.Origin, "")
	if err != nil {
		f.Fatal(err)
	}
	h := &Handler{store: zonestore.NewStore(), history: &history{}}
	h.store.Publish(nil, z, false)
	chain := fastpack.Fastpack{Next: &aliasplugin.Alias{Next: h}}
	for _, q := range workload.Queries(200, 40) {
		m := new(dns.Msg)
		m.SetQuestion(q.Name, dns.StringToType[q.Type])
		m.SetEdns0(1232, true)
		b, _ := m.Pack()
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		r := new(dns.Msg)
		if r.Unpack(data) != nil || r.Response || len(r.Question) != 1 {
			return // the server answers these itself (FORMERR, or nothing)
		}
		if q := r.Question[0]; (q.Qtype == dns.TypeA || q.Qtype == dns.TypeAAAA) && strings.HasPrefix(strings.ToLower(q.Name), "aliased.") {
			return // an ALIAS lookup would go to an upstream: not here
		}
		w := &captureWriter{}
		chain.ServeDNS(context.Background(), w, r)
		if w.out == nil {
			return
		}
		var m dns.Msg
		if err := m.Unpack(w.out); err != nil {
			t.Fatalf("the answer does not unpack: %v", err)
		}
		if m.Id != r.Id || !m.Response {
			t.Fatalf("answer id %d response %v to query %d", m.Id, m.Response, r.Id)
		}
	})
}
