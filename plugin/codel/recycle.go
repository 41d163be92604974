package codel

import (
	"reflect"
	"unsafe"

	"github.com/coredns/coredns/core/dnsserver"
)

// A query read here gets a Life (codel.Life), and what the reader and the
// plugins made for it is made again for the next query instead of
// allocated, only where nothing can keep the query past the chain's return
// but through its Hop (Suspend, Send, Hold). A plugin that goes on with a
// query on a goroutine of its own (the stock cache plugin prefetches, and
// verifies stale answers, on the rest of the chain with the query's
// context) would find the context, writer and messages it holds reused by
// the next query. So every plugin of every server block on the reader's
// socket must be one known to finish each query before its ServeDNS
// returns; one that is not, or a server whose blocks cannot be read, turns
// recycling off for that socket, and its queries allocate as before.

// finishesInPlace lists the plugins read to finish with a query before
// ServeDNS returns, or to hold it through its Hop. Plugins without a
// handler (bind, health, ready, reload) never see a query.
var finishesInPlace = map[string]bool{
	// ontime's own (alias holds what it parks).
	"codel": true, "fastpack": true, "rrl": true, "alias": true, "zonestore": true,
	// Stock ones read for it in CoreDNS 1.15.0: each answers, or passes the
	// query on and writes, before it returns, and keeps no part of it.
	"prometheus": true, "errors": true, "log": true, "whoami": true,
	"acl": true, "any": true, "minimal": true, "nsid": true, "bufsize": true,
	"chaos": true, "cancel": true,
	// dnssec caches the signatures it makes, not the answers it signs.
	"dnssec": true,
}

// recyclable reports whether every plugin of every server block s serves
// is in finishesInPlace; if not, why not, for the log.
func recyclable(s *dnsserver.Server) (bool, string) {
	configs := configsOf(s)
	if len(configs) == 0 {
		return false, "its server blocks cannot be read"
	}
	for _, c := range configs {
		for _, h := range c.Handlers() {
			if !finishesInPlace[h.Name()] {
				return false, "plugin " + h.Name() + " may go on with a query after its ServeDNS returns"
			}
		}
	}
	return true, ""
}

// waitsInPlace are plugins of finishesInPlace that may wait, on the
// goroutine that serves a query, for something other than the CPU where
// the query has no queue to come back to (TCP): alias waits for its lookup
// there.
var waitsInPlace = map[string]bool{"alias": true}

// onlyComputes reports whether every plugin of every server block s
// serves finishes each query in place without waiting (finishesInPlace,
// but waitsInPlace): then an answer is never made long after the one
// before it on a TCP connection, and codel's listeners may hold answers to
// write them together (tcplisten.go).
func onlyComputes(s *dnsserver.Server) bool {
	if ok, _ := recyclable(s); !ok {
		return false
	}
	for _, c := range configsOf(s) {
		for _, h := range c.Handlers() {
			if waitsInPlace[h.Name()] {
				return false
			}
		}
	}
	return true
}

// configsOf returns the server blocks s serves; nil where they cannot be
// read (serverZones).
func configsOf(s *dnsserver.Server) []*dnsserver.Config {
	var configs []*dnsserver.Config
	for _, list := range serverZones(s) {
		configs = append(configs, list...)
	}
	return configs
}

// serverZones returns s's table of server blocks by zone. CoreDNS exports
// no way to list them; they are read from the server's own table (zones,
// in CoreDNS 1.15). Where that table is not what it was, serverZones
// returns nil: nothing is recycled nor routed here, and
// TestRecyclingIsOnForTheExample fails then, rather than the server
// growing slower unseen.
func serverZones(s *dnsserver.Server) map[string][]*dnsserver.Config {
	v := reflect.ValueOf(s).Elem().FieldByName("zones")
	if !v.IsValid() || v.Type() != reflect.TypeFor[map[string][]*dnsserver.Config]() {
		return nil
	}
	return *(*map[string][]*dnsserver.Config)(unsafe.Pointer(v.UnsafeAddr()))
}
