// Package replay keeps answers as they were packed, by question, so that
// a question asked again, the same way, is answered with the same octets
// without being looked up or packed again.
//
// An authoritative server's answer is a function of the question and the
// zone's version: the same name in the same case, type and class, the same
// header flags that the answer copies and the same EDNS record give the
// same message, and the same packed octets, but for the ID. Key holds all
// of that but the version, which each answer keeps beside it: a zone
// replaced is a new version, and its old answers are never hits again.
//
// A Cache is one goroutine's at a time and writes nothing another core
// reads: a server keeps one per P (sync.Pool), so that nothing in it is
// written by every core. No CoreDNS import.
package replay

import "github.com/miekg/dns"

// Answer is one answer as it was packed, with what the writers above the
// packer read of its message when it was kept (WriteMsgKeep): each
// writer fills in what it reads, and reads it back when the answer is
// written again (WritePacked). A field no writer reads stays zero.
type Answer struct {
	Wire  []byte // the packed message, as written (the packer's)
	Rcode int    // the message's rcode (the metrics' recorder's)
	Len   int    // the message's Msg.Len, before it was packed (the metrics' recorder's)
	// Subject is what a rate limiter keys the message by, apart from the
	// client (the rrl plugin's writer's: rrl.Limiter.Subject); 0 where no
	// limiter's writer kept the answer.
	Subject uint64
	// AnyCase is the answerer's (zonestore's): the octets depend on the
	// case of the question's name only in the question, where the answer
	// holds no name made of its labels but the ones that compress to it
	// (a DNAME's CNAME does: its target is the question's labels over the
	// DNAME's target). Kept so, the answer is the answer to the question
	// asked in any case, with the question written as asked (Find).
	AnyCase bool
	// Stream is Find's, read from the key kept with the answer: it was
	// kept for a request over a stream (Key), packed to 65,535 octets. A
	// packer writes it again only to a request over a stream, and one
	// kept for UDP only over UDP.
	Stream bool
}

// Writer is a dns.ResponseWriter that can keep what it packs and write it
// again. Every writer from the plugin that answers down to the packer
// must be one for an answer to be kept or written again: a writer that
// does anything else with a message (change it, count it in its own way)
// is not, and its queries are answered as always.
type Writer interface {
	dns.ResponseWriter
	// Replays reports whether this writer, and every writer below it
	// down to the one that packs, keeps and writes kept answers for the
	// query it was made for: where one does not, the query is answered
	// as always, and counted neither a hit nor a miss.
	Replays() bool
	// WriteMsgKeep writes m, the answer to request r, as WriteMsg does,
	// and fills in keep with what it reads of m: the packer appends to
	// keep.Wire the octets it wrote, where it packed them itself for r,
	// and leaves it as it was where it did not (a message it handed to
	// miekg/dns, a signed one, r not the request it was made for); such
	// an answer is not kept.
	WriteMsgKeep(r, m *dns.Msg, keep *Answer) error
	// WritePacked writes a, an answer kept for the request r, as
	// WriteMsg would have written its message: each writer records what
	// it would have read of that message from a. It reports false, having
	// written nothing, where it cannot (r is not the request it was made
	// for); the caller then answers as always.
	WritePacked(r *dns.Msg, a *Answer) (bool, error)
}

// SetID writes id into a packed message's header.
func SetID(wire []byte, id uint16) {
	wire[0], wire[1] = byte(id>>8), byte(id)
}
