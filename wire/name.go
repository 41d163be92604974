package wire

import (
	"encoding/binary"
	"errors"
	"hash/maphash"
	"math/bits"
	"strings"

	"github.com/ontimedns/ontime/internal/swar"
)

// maxPointer bounds the offsets a compression pointer may hold: 14 bits,
// the same limit miekg/dns keeps (offsets below 0x4000).
const maxPointer = 1 << 14

// noPointer marks a name written past maxPointer, which nothing may point to.
const noPointer = 0xFFFF

var (
	errFqdn  = errors.New("wire: domain name is not fully qualified")
	errLabel = errors.New("wire: bad label (empty, or longer than 63 octets)")
	errLong  = errors.New("wire: domain name longer than 255 octets")
)

// suffix is one slot of the compression table: a name suffix already in the
// message, keyed by its lowercased wire form. The key bytes live in
// Encoder.keys, so a slot holds no pointer and clearing it is a store.
type suffix struct {
	hash uint32
	gen  uint32 // the message that wrote the slot: any other marks it empty
	klen uint16
	off  uint16 // where the suffix starts in the message
	kpos uint32 // key bytes are keys[kpos : kpos+klen]
}

// whole is one slot of the table of names as the caller spelled them: a
// name met before is answered from here before it is split or lowercased.
type whole struct {
	name string
	gen  uint32 // as in suffix
	ptr  uint16 // offset of the name in the message, or noPointer
	wire []byte // its wire form in its own case, in wires
}

// names is the compression state of one message. It lives in the Encoder
// and is neither rebuilt nor cleared between messages: a slot counts only
// if it holds the current message's generation, so forgetting a message is
// one increment.
type names struct {
	seed     maphash.Seed
	gen      uint32
	suffixes []suffix
	nsuffix  int
	wholes   []whole // open addressing, once more than maxListed names are known
	nwhole   int
	few      []whole // the names known while they are at most maxListed, in order
	keys     []byte
	wires    []byte

	// Until hashed is set, the message's names are found by comparison
	// with the few written so far (list.go), and the suffix table is empty.
	hashed  bool
	maxList int // maxListed; 0 in a test, which hashes every name
	listed  []listed
	starts  []uint8  // label starts of the listed names not remembered
	offs    []uint16 // the message offset of each of those labels' suffixes

	// Scratch for the name being written: lowercased wire form, label
	// offsets and the hash of each suffix.
	lower  [256 + 8]byte // room for the last word of a 255-octet name
	labels [128]uint8
	hashes [128]uint32
}

func (t *names) init() {
	t.seed = maphash.MakeSeed()
	t.suffixes = make([]suffix, 256)
	t.wholes = make([]whole, 64)
	t.few = make([]whole, 0, maxListed)
	t.gen = 1
	t.maxList = maxListed
}

// reset forgets the previous message. It says whether the generation
// counter wrapped, so that other slots marked with it are cleared too.
func (t *names) reset() (wrapped bool) {
	t.gen++
	if t.gen == 0 { // wrapped: a slot's old generation could come back
		clear(t.suffixes)
		clear(t.wholes)
		t.gen = 1
		wrapped = true
	}
	t.nsuffix, t.nwhole = 0, 0
	t.few = t.few[:0]
	t.hashed = false
	t.listed, t.starts, t.offs = t.listed[:0], t.starts[:0], t.offs[:0]
	t.keys, t.wires = t.keys[:0], t.wires[:0]
	return wrapped
}

// findWhole returns the slot of name s, or nil, and the hash of s when
// the table was searched (0 when not: addWhole computes it then). While a
// message has named at most maxListed names they are compared in order,
// which costs less than hashing the name (hash/maphash took a tenth of a
// small message).
func (t *names) findWhole(s string) (*whole, uint64) {
	if t.nwhole == 0 {
		for i := range t.few {
			if t.few[i].name == s {
				return &t.few[i], 0
			}
		}
		return nil, 0
	}
	h := maphash.String(t.seed, s)
	mask := uint64(len(t.wholes) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		w := &t.wholes[i]
		if w.gen != t.gen {
			return nil, h
		}
		if w.name == s {
			return w, h
		}
	}
}

// addWhole remembers the name s, whose wire form in its own case is wire,
// and the pointer that names it (ptr, or noPointer past the limit), for a
// name the scanned slots do not hold. h is findWhole's hash of s, or 0 if
// it has none.
func (t *names) addWhole(s string, h uint64, ptr int, wire []byte) {
	p := uint16(noPointer)
	if ptr >= 0 && ptr < maxPointer {
		p = uint16(ptr)
	}
	n := len(t.wires)
	t.wires = append(t.wires, wire...)
	wire = t.wires[n:]
	if t.nwhole == 0 && len(t.few) < maxListed {
		// Field by field, as in addSuffix: a whole built on the stack and
		// appended is copied with wide loads of its narrow stores, which
		// stall (a tenth of a small message's time).
		t.few = t.few[:len(t.few)+1]
		d := &t.few[len(t.few)-1]
		d.name, d.gen, d.ptr, d.wire = s, t.gen, p, wire
		return
	}
	w := whole{name: s, gen: t.gen, ptr: p, wire: wire}
	if t.nwhole == 0 { // the list is full: from here on, the table
		for i := range t.few {
			t.insertWhole(&t.few[i], maphash.String(t.seed, t.few[i].name))
		}
	}
	if h == 0 {
		h = maphash.String(t.seed, s)
	}
	t.insertWhole(&w, h)
}

func (t *names) insertWhole(w *whole, h uint64) {
	if 2*(t.nwhole+1) > len(t.wholes) {
		t.growWholes()
	}
	mask := uint64(len(t.wholes) - 1)
	i := h & mask
	for t.wholes[i].gen == t.gen {
		i = (i + 1) & mask
	}
	// Field by field, as in addSuffix.
	d := &t.wholes[i]
	d.name, d.gen, d.ptr, d.wire = w.name, t.gen, w.ptr, w.wire
	t.nwhole++
}

func (t *names) growWholes() {
	old := t.wholes
	t.wholes = make([]whole, 2*len(old))
	mask := uint64(len(t.wholes) - 1)
	for _, w := range old {
		if w.gen != t.gen {
			continue
		}
		i := maphash.String(t.seed, w.name) & mask
		for t.wholes[i].gen == t.gen {
			i = (i + 1) & mask
		}
		t.wholes[i] = w
	}
}

// probeSuffix returns the slot that holds key, or the empty slot where it
// would go.
func (t *names) probeSuffix(key []byte, h uint32) (uint32, bool) {
	mask := uint32(len(t.suffixes) - 1)
	for i := h & mask; ; i = (i + 1) & mask {
		s := &t.suffixes[i]
		if s.gen != t.gen {
			return i, false
		}
		if s.hash == h && int(s.klen) == len(key) && string(t.keys[s.kpos:s.kpos+uint32(s.klen)]) == string(key) {
			return i, true
		}
	}
}

// findSuffix returns the message offset of the suffix whose lowercased wire
// form is key.
func (t *names) findSuffix(key []byte, h uint32) (int, bool) {
	i, ok := t.probeSuffix(key, h)
	return int(t.suffixes[i].off), ok
}

// addSuffix records that the suffix keys[kpos:kpos+klen] starts at off,
// unless it is already known.
func (t *names) addSuffix(kpos, klen int, h uint32, off int) {
	if 2*(t.nsuffix+1) > len(t.suffixes) {
		t.growSuffixes()
	}
	i, known := t.probeSuffix(t.keys[kpos:kpos+klen], h)
	if known {
		return
	}
	// Field by field: a composite literal is built on the stack and copied
	// with one 16-octet load, which cannot be forwarded from the narrow
	// stores that built it and stalls (a quarter of a short message's time).
	sl := &t.suffixes[i]
	sl.hash, sl.gen, sl.klen, sl.off, sl.kpos = h, t.gen, uint16(klen), uint16(off), uint32(kpos)
	t.nsuffix++
}

func (t *names) growSuffixes() {
	old := t.suffixes
	t.suffixes = make([]suffix, 2*len(old))
	mask := uint32(len(t.suffixes) - 1)
	for _, s := range old {
		if s.gen != t.gen {
			continue
		}
		i := s.hash & mask
		for t.suffixes[i].gen == t.gen {
			i = (i + 1) & mask
		}
		t.suffixes[i] = s
	}
}

// index lowercases the literal wire name w into t.lower and computes, for
// each label, its offset and the hash of the suffix that starts there. The
// lowercasing goes eight octets at a time (SWAR: length octets are below
// 'A', so the whole wire form can be treated as text), and the hashes run
// from the root leftwards, a word at a time, so the whole name costs one
// pass. It returns the number of labels (the root not counted).
func (t *names) index(w []byte) int {
	nl := 0
	for i := 0; w[i] != 0; i += int(w[i]) + 1 {
		t.labels[nl] = uint8(i)
		nl++
	}
	// Words are read up to eight octets past the name where the buffer
	// has room (the bytes past it are masked off or overwritten), so the
	// last word needs no copy.
	n := len(w)
	src := w
	if cap(w) >= n+8 {
		src = w[:n+8]
	} else {
		var pad [256 + 8]byte
		copy(pad[:], w)
		src = pad[:n+8]
	}
	for k := 0; k < n; k += 8 {
		binary.LittleEndian.PutUint64(t.lower[k:], swar.Lower(binary.LittleEndian.Uint64(src[k:])))
	}
	// The hashes read the name again, not t.lower: a wide load of octets
	// just stored cannot be forwarded from the stores and stalls.
	h := uint64(0x9E3779B97F4A7C15)
	for j := nl - 1; j >= 0; j-- {
		lo := int(t.labels[j])
		hi := lo + int(w[lo]) + 1
		for k := lo; k < hi; k += 8 {
			x := swar.Lower(binary.LittleEndian.Uint64(src[k:]))
			if r := hi - k; r < 8 {
				x &= 1<<(8*uint(r)) - 1
			}
			h = mix(h, x)
		}
		t.hashes[j] = uint32(h ^ h>>32)
	}
	t.lower[n-1] = 0
	return nl
}

// scanPlain appends the wire form of s, a fully qualified name without
// escapes, in its own case, and lowercases it and finds its labels as index
// would (hashPlain then hashes its suffixes, when the hash tables are in
// use). In such a name the wire form is the text shifted by one octet, each
// dot replaced by the length of the label after it, so it is one copy and a
// patch per label; the dots are found and the text lowercased eight octets
// at a time, read from s rather than from octets just stored.
func (t *names) scanPlain(b []byte, s string) ([]byte, int, error) {
	if len(s)+1 > 255 {
		return b, 0, errLong
	}
	start := len(b)
	b = append(append(b, 0), s...)
	nl, label := 0, 0 // label: where the current label's length octet is
	for k := 0; k < len(s); k += 8 {
		x := swar.Word(s, k)
		binary.LittleEndian.PutUint64(t.lower[1+k:], swar.Lower(x))
		for dots := swar.Dots(x, len(s)-k); dots != 0; dots &= dots - 1 {
			d := k + bits.TrailingZeros64(dots)/8 // the dot ends label nl
			n := d - label
			if n == 0 || n > 63 {
				return b[:start], 0, errLabel
			}
			t.labels[nl] = uint8(label)
			b[start+label], t.lower[label] = byte(n), byte(n)
			nl++
			label = d + 1
		}
	}
	if label != len(s) {
		return b[:start], 0, errFqdn
	}
	b[start+len(s)], t.lower[len(s)] = 0, 0 // the root, where the last dot was
	return b, nl, nil
}

// hashPlain computes the suffix hashes of the plain name s, as index
// would, once scanPlain has written its wire form w and found its nl labels.
func (t *names) hashPlain(w []byte, s string, nl int) {
	h := uint64(0x9E3779B97F4A7C15)
	for j := nl - 1; j >= 0; j-- {
		// Words of the label's wire form, as index reads them: the length
		// octet at lo, then the text, s[lo:lo+n].
		lo := int(t.labels[j])
		n := int(w[lo])
		for k := 0; k <= n; k += 8 {
			var x uint64
			if k == 0 {
				x = swar.Lower(swar.Word(s, lo))<<8 | uint64(n)
			} else {
				x = swar.Lower(swar.Word(s, lo+k-1))
			}
			if r := n + 1 - k; r < 8 {
				x &= 1<<(8*uint(r)) - 1
			}
			h = mix(h, x)
		}
		t.hashes[j] = uint32(h ^ h>>32)
	}
}

// mix folds the word x into the suffix hash h.
func mix(h, x uint64) uint64 {
	h = (h ^ x) * 0xFF51AFD7ED558CCD
	return h ^ h>>29
}

// register adds the suffixes that start at the first nl labels of the wire
// name w, written at off in the message (all its labels, or those before
// the pointer it ends in), that the table does not know yet.
func (t *names) register(w []byte, nl, off int) {
	if off >= maxPointer || nl == 0 {
		return
	}
	kpos := len(t.keys)
	t.keys = append(t.keys, t.lower[:len(w)]...)
	for j := 0; j < nl; j++ {
		o := off + int(t.labels[j])
		if o >= maxPointer {
			break
		}
		t.addSuffix(kpos+int(t.labels[j]), len(w)-int(t.labels[j]), t.hashes[j], o)
	}
}

// appendName appends the wire form of the presentation name s (escapes
// \X and \DDD as miekg/dns reads them) in its own case, with no
// compression, and returns the extended buffer.
func appendName(b []byte, s string) ([]byte, error) {
	if strings.IndexByte(s, '\\') < 0 {
		return appendPlainName(b, s)
	}
	start := len(b)
	lstart := len(b)
	b = append(b, 0)
	closed := false
	for i := 0; i < len(s); i++ {
		c := s[i]
		closed = false
		switch c {
		case '\\':
			if i+1 == len(s) {
				return b[:start], errFqdn
			}
			if isDDD(s[i+1:]) {
				c = dddToByte(s[i+1:])
				i += 3
			} else {
				c = s[i+1]
				i++
			}
			b = append(b, c)
		case '.':
			l := len(b) - lstart - 1
			if l == 0 || l > 63 {
				return b[:start], errLabel
			}
			b[lstart] = byte(l)
			lstart = len(b)
			b = append(b, 0)
			closed = true
		default:
			b = append(b, c)
		}
	}
	if !closed {
		return b[:start], errFqdn
	}
	if len(b)-start > 255 {
		return b[:start], errLong
	}
	return b, nil
}

func isDDD(s string) bool {
	return len(s) >= 3 && isDigit(s[0]) && isDigit(s[1]) && isDigit(s[2])
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// dddToByte wraps past 255 as miekg/dns's does, so both encoders agree.
func dddToByte(s string) byte {
	return byte((s[0]-'0')*100 + (s[1]-'0')*10 + (s[2] - '0'))
}

// appendPlainName is appendName for names without escapes, the common case:
// each label is found with IndexByte and copied whole.
func appendPlainName(b []byte, s string) ([]byte, error) {
	start := len(b)
	for rest := s; len(rest) > 0; {
		i := strings.IndexByte(rest, '.')
		switch {
		case i < 0:
			return b[:start], errFqdn
		case i == 0 || i > 63:
			return b[:start], errLabel
		}
		b = append(append(b, byte(i)), rest[:i]...)
		rest = rest[i+1:]
	}
	b = append(b, 0)
	if len(b)-start > 255 {
		return b[:start], errLong
	}
	return b, nil
}
