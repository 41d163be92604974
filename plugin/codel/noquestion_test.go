package codel

import (
	"context"
	"testing"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"
)

// answerer is a plugin that answers messages of no question.
type answerer struct{ _ int } // of some size: two are two pointers

func (*answerer) Name() string { return "rrl" }
func (*answerer) ServeDNS(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
	return 0, nil
}
func (*answerer) AnswerQuestionless(dns.ResponseWriter, *dns.Msg) bool { return true }

// other is a plugin that does not.
type other struct{}

func (other) Name() string { return "whoami" }
func (other) ServeDNS(context.Context, dns.ResponseWriter, *dns.Msg) (int, error) {
	return 0, nil
}

// TestChooseQuestionless: the root block's answerer where the server has
// one, else the one answerer of all its blocks, else none.
func TestChooseQuestionless(t *testing.T) {
	a, b := &answerer{}, &answerer{}
	on := func(zone string, hs ...plugin.Handler) block { return block{zone, hs} }
	for _, tc := range []struct {
		name   string
		blocks []block
		want   questionless
	}{
		{"no block", nil, nil},
		{"no answerer", []block{on(".", other{})}, nil},
		{"one block's", []block{on("example.org.", other{}, a)}, a},
		{"one of two blocks", []block{on("example.org.", a), on("example.net.", other{})}, a},
		{"two, no root", []block{on("example.org.", a), on("example.net.", b)}, nil},
		{"two, the root's", []block{on("example.org.", a), on(".", b)}, b},
		{"the root's first", []block{on(".", b), on("example.org.", a)}, b},
		{"one in two blocks", []block{on("example.org.", a), on("example.net.", a)}, a},
	} {
		if got := chooseQuestionless(tc.blocks); got != tc.want {
			t.Errorf("%s: %p, want %p", tc.name, got, tc.want)
		}
	}
}
