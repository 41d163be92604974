package codel

import (
	"slices"
	"testing"
)

// given is an Ender that records, in order, that it was given back.
type given struct {
	name string
	log  *[]string
}

func (g given) End() { *g.log = append(*g.log, g.name) }

// TestLifeGivesBackLastFirst: what a query's plugins registered is given
// back when it ends, the innermost first, once; the Life is then empty.
func TestLifeGivesBackLastFirst(t *testing.T) {
	var log []string
	var l Life
	for _, n := range []string{"writer", "answer"} {
		if !l.AtEnd(given{n, &log}) {
			t.Fatalf("AtEnd(%s) refused on a fresh Life", n)
		}
	}
	if held := l.End(); held {
		t.Fatal("End reports held; nothing held it")
	}
	if want := []string{"answer", "writer"}; !slices.Equal(log, want) {
		t.Fatalf("given back %v, want %v", log, want)
	}
	if l.End(); len(log) != 2 {
		t.Fatalf("a second End gave back again: %v", log)
	}
}

// TestHeldLifeGivesNothingBack: a query whose work left the worker keeps
// everything, registered before or after it was held.
func TestHeldLifeGivesNothingBack(t *testing.T) {
	var log []string
	var l Life
	l.AtEnd(given{"writer", &log})
	Hop{Queue: New(Config{Workers: 1}), Life: &l}.Hold()
	if l.AtEnd(given{"answer", &log}) {
		t.Fatal("AtEnd accepted on a held Life")
	}
	if held := l.End(); !held {
		t.Fatal("End does not report the Life held")
	}
	if len(log) != 0 {
		t.Fatalf("a held Life gave back %v", log)
	}
	// Ended, it stays held: its reader does not reuse it, and a plugin
	// that meets the query again on its way back registers nothing.
	if l.AtEnd(given{"later", &log}) || !l.End() || len(log) != 0 {
		t.Fatalf("a held Life, ended, took %v", log)
	}
}

// TestSendHolds: a query handed to a pool (Send, Suspend) is held.
func TestSendHolds(t *testing.T) {
	pool := New(Config{Workers: 1})
	defer pool.Close()
	var l Life
	done := make(chan struct{})
	Hop{Queue: pool, Life: &l, Arrival: Now()}.Send(pool, taskFunc(func() { close(done) })) // arrival 0 would be as old as the process, and past its deadline
	<-done
	if !l.End() {
		t.Fatal("a query sent to a pool is not held")
	}
}

// TestNoLifeRecyclesNothing: a query no reader recycles (nil Life) and a
// full Life refuse, so their callers keep what they made.
func TestNoLifeRecyclesNothing(t *testing.T) {
	var log []string
	var none *Life
	none.Hold()
	if none.AtEnd(given{"x", &log}) {
		t.Fatal("a nil Life accepted AtEnd")
	}
	var l Life
	for i := range maxEnds {
		if !l.AtEnd(given{string(rune('a' + i)), &log}) {
			t.Fatalf("AtEnd %d refused", i)
		}
	}
	if l.AtEnd(given{"over", &log}) {
		t.Fatal("a full Life accepted one more")
	}
	l.End()
	if len(log) != maxEnds || slices.Contains(log, "over") {
		t.Fatalf("given back %v", log)
	}
}

// taskFunc is a Task that runs a function.
type taskFunc func()

func (f taskFunc) Run()        { f() }
func (f taskFunc) Drop(Reason) {}
