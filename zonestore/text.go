package zonestore

import (
	"bytes"
	"hash/maphash"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/yield"
)

// A large zone file re-read with few changes (a new serial and a handful
// of names, dozens of times a day) is mostly the text it was before. Its
// records are therefore compared as text, before any is parsed: only the
// records whose text changed are parsed and applied to the version served
// as an edit. Parsing every record of a 170,000-name file allocated 146 MB
// (2.7 million objects) a re-read, and that garbage is what made the
// collector run during swaps (bench/swap.sh).
//
// A record's text means what it says only with what the parser carries
// into it from the records before: the origin and $TTL (the directives,
// which the fast path accepts only at the top of the file, the same in
// both versions), the owner that a record starting with a blank repeats,
// and the TTL that a record without one takes from the last record that
// had one. A unit is one record's text with that context; two units with
// the same hash parse to the same record.

// textMinBytes is the size from which a zone file's units are kept for
// the next re-read: below it, parsing the whole file is cheap, and a
// million small zones would each keep a copy of their text.
const textMinBytes = 64 << 10

// maxTextEdits bounds the records a text comparison parses one at a time;
// past it, the file is parsed whole.
const maxTextEdits = 1000

var unitSeeds = [2]maphash.Seed{maphash.MakeSeed(), maphash.MakeSeed()}

type unitHash [2]uint64

// unit is one record's text in a master file, and the context it is parsed in.
type unit struct {
	hash       unitHash
	start, end int32 // the record's text, comments included
	owner      span  // the owner repeated by a record that starts with a blank; empty otherwise
	ttl        span  // the TTL inherited by a record without one, when there is no $TTL; empty otherwise
}

type span struct{ start, end int32 }

// masterText is a zone file split into units.
type masterText struct {
	text   []byte
	header []byte // the directives ($ORIGIN, $TTL) and comments before the first record
	hasTTL bool   // the header sets $TTL
	units  []unit // in the file's order
}

// scanText splits text into units. It returns nil for a file the fast
// path does not handle: a directive after the first record, $INCLUDE or
// $GENERATE, a parenthesis or quote left open, or more than a 32-bit
// offset. (Two lines with the same text and context are caught where the
// versions are compared: they hold one record, and the counts differ.)
func scanText(text []byte, pace *yield.Pacer) *masterText {
	if len(text) >= 1<<31-1 {
		return nil
	}
	lines := bytes.Count(text, []byte{'\n'})
	t := &masterText{text: text, units: make([]unit, 0, lines)}
	var owner, ttl span
	inHeader := true
	for pos := 0; pos < len(text); {
		end, ok := entryEnd(text, pos)
		if !ok {
			return nil
		}
		pace.Tick()
		entry := text[pos:end]
		all, n := firstTokens(entry)
		toks := all[:n]
		switch {
		case n == 0: // blank or comment only
		case entry[0] == '$':
			if !inHeader {
				return nil
			}
			d := entry[toks[0].start:toks[0].end]
			isTTL := bytes.EqualFold(d, []byte("$TTL"))
			if !isTTL && !bytes.EqualFold(d, []byte("$ORIGIN")) {
				return nil
			}
			t.hasTTL = t.hasTTL || isTTL
		default:
			if inHeader {
				inHeader = false
				t.header = text[:pos]
			}
			u := unit{start: int32(pos), end: int32(end)}
			rest := toks
			if entry[0] == '(' || entry[0] == '"' {
				return nil // not how owners are written: leave it to the parser
			}
			if entry[0] != ' ' && entry[0] != '\t' {
				owner = span{int32(pos) + toks[0].start, int32(pos) + toks[0].end}
				rest = toks[1:]
			} else {
				u.owner = owner
			}
			ownTTL := false
			for _, tk := range rest {
				c := entry[tk.start]
				if c >= '0' && c <= '9' {
					ownTTL = true
					ttl = span{int32(pos) + tk.start, int32(pos) + tk.end}
					break
				}
				if !isClass(entry[tk.start:tk.end]) {
					break // the type
				}
			}
			if !ownTTL && !t.hasTTL {
				u.ttl = ttl
			}
			u.hash = t.hash(u)
			t.units = append(t.units, u)
		}
		pos = end
	}
	if inHeader {
		t.header = text
	}
	return t
}

// hash is a unit's identity: its text with its context.
func (t *masterText) hash(u unit) unitHash {
	var h unitHash
	for i, seed := range unitSeeds {
		var m maphash.Hash
		m.SetSeed(seed)
		m.Write(t.text[u.owner.start:u.owner.end])
		m.WriteByte(0)
		m.Write(t.text[u.ttl.start:u.ttl.end])
		m.WriteByte(0)
		m.Write(t.text[u.start:u.end])
		h[i] = m.Sum64()
	}
	return h
}

// source is the text that parses, alone, to the unit's record: the
// header, the inherited TTL as a $TTL, the repeated owner, the record.
func (t *masterText) source(u unit) []byte {
	b := append([]byte(nil), t.header...)
	if u.ttl.end > u.ttl.start {
		b = append(b, "\n$TTL "...)
		b = append(b, t.text[u.ttl.start:u.ttl.end]...)
	}
	b = append(b, '\n')
	b = append(b, t.text[u.owner.start:u.owner.end]...)
	return append(b, t.text[u.start:u.end]...)
}

// entryEnd returns where the entry starting at pos ends: after the newline
// that ends it outside parentheses and quotes, or at the end of the text.
// ok is false when a parenthesis or quote is still open at the end.
func entryEnd(text []byte, pos int) (end int, ok bool) {
	depth, quoted := 0, false
	for i := pos; i < len(text); i++ {
		switch c := text[i]; {
		case c == '\\':
			i++ // the escaped character, whatever it is
		case quoted:
			quoted = c != '"'
		case c == '"':
			quoted = true
		case c == ';':
			for i < len(text) && text[i] != '\n' {
				i++
			}
			if i < len(text) && depth == 0 {
				return i + 1, true
			}
		case c == '(':
			depth++
		case c == ')':
			depth--
			if depth < 0 {
				return 0, false
			}
		case c == '\n' && depth == 0:
			return i + 1, true
		}
	}
	return len(text), depth == 0 && !quoted
}

type token struct{ start, end int32 }

// firstTokens returns up to four tokens at the start of an entry (owner,
// TTL and class in either order, type), outside comments; parentheses
// separate tokens.
func firstTokens(entry []byte) (toks [4]token, n int) {
	for i := 0; i < len(entry) && n < len(toks); {
		c := entry[i]
		switch {
		case c == ';':
			return toks, n
		case c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '(' || c == ')':
			i++
		default:
			start := i
			for i < len(entry) {
				c := entry[i]
				if c == '\\' {
					i += 2
					continue
				}
				if c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '(' || c == ')' || c == ';' {
					break
				}
				i++
			}
			toks[n] = token{int32(start), int32(min(i, len(entry)))}
			n++
		}
	}
	return toks, n
}

// isClass reports whether a token is a DNS class mnemonic, as the master
// file parser reads them.
func isClass(tok []byte) bool {
	for _, c := range [...]string{"IN", "CH", "HS", "CS", "NONE", "ANY"} {
		if bytes.EqualFold(tok, []byte(c)) {
			return true
		}
	}
	return len(tok) > 5 && bytes.EqualFold(tok[:5], []byte("CLASS"))
}

// record parses a unit alone: its record, or nil if it does not parse to
// exactly one.
func (t *masterText) record(u unit, origin, file string) dns.RR {
	var rr dns.RR
	n := 0
	err := readRecords(bytes.NewReader(t.source(u)), origin, file, nil, func(r dns.RR, _ int) error {
		rr = r
		n++
		return nil
	})
	if err != nil || n != 1 {
		return nil
	}
	return rr
}

// resyncWindow is how far diffUnits looks ahead, in each file, for the two
// to agree again after a difference: a few changed lines in a row.
const resyncWindow = 64

// diffUnits returns the units of old that cur lacks (removed) and those of
// cur that old lacks (added), or ok false past maxTextEdits of either.
// The files are walked side by side, as an edit leaves them: equal units
// in the same order, a few lines changed, added or removed here and there.
// After a difference, the walk looks up to resyncWindow units ahead in each
// file for the next pair that agrees; failing that, the rest of both is
// compared through a map of old's hashes. Any alignment gives the right
// answer: units that pair up have the same text in the same context, so
// old less removed plus added holds cur's records.
func diffUnits(old, cur []unit, pace *yield.Pacer) (added, removed []unit, ok bool) {
	i, j := 0, 0
	for i < len(old) && j < len(cur) {
		pace.Tick()
		if old[i].hash == cur[j].hash {
			i, j = i+1, j+1
			continue
		}
		di, dj, found := resync(old[i:], cur[j:])
		if !found {
			break
		}
		removed, added = append(removed, old[i:i+di]...), append(added, cur[j:j+dj]...)
		if len(removed) > maxTextEdits || len(added) > maxTextEdits {
			return nil, nil, false
		}
		i, j = i+di, j+dj
	}
	if i < len(old) && j < len(cur) {
		// No pair agreed nearby: the rest by hash.
		rest := make(map[unitHash]int32, len(old)-i)
		for k := i; k < len(old); k++ {
			pace.Tick()
			rest[old[k].hash] = int32(k)
		}
		kept := make([]bool, len(old)-i)
		for _, u := range cur[j:] {
			pace.Tick()
			if k, hit := rest[u.hash]; hit {
				kept[int(k)-i] = true
			} else if added = append(added, u); len(added) > maxTextEdits {
				return nil, nil, false
			}
		}
		for k, hit := range kept {
			if !hit {
				removed = append(removed, old[i+k])
			}
		}
		i, j = len(old), len(cur)
	}
	removed, added = append(removed, old[i:]...), append(added, cur[j:]...)
	if len(removed) > maxTextEdits || len(added) > maxTextEdits {
		return nil, nil, false
	}
	return added, removed, true
}

// resync finds the nearest point, within resyncWindow units of the start
// of each, where old and cur agree again: di units of old removed and dj
// of cur added before it.
func resync(old, cur []unit) (di, dj int, found bool) {
	for d := 1; d <= resyncWindow; d++ {
		for k := 0; k <= d; k++ {
			// d steps in all: k in old, d-k in cur.
			if k < len(old) && d-k < len(cur) && old[k].hash == cur[d-k].hash {
				return k, d - k, true
			}
		}
	}
	return 0, 0, false
}
