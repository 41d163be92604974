package wire

import (
	"errors"
	"testing"

	"github.com/miekg/dns"
)

// FuzzEncode feeds arbitrary messages (unpacked from fuzzed bytes) through
// both encoders and applies the parity check. Declining is allowed only
// where miekg/dns cannot pack the message either, or where it holds more
// than one OPT record.
func FuzzEncode(f *testing.F) {
	for _, m := range synthetic() {
		if b, err := m.Pack(); err == nil {
			f.Add(b, uint16(512))
			f.Add(b, uint16(1232))
		}
	}
	e := NewEncoder()
	f.Fuzz(func(t *testing.T, data []byte, size uint16) {
		var m dns.Msg
		if err := m.Unpack(data); err != nil {
			return
		}
		_, err := parity(e, &m, int(size))
		if errors.Is(err, errBothUnreadable) {
			return
		}
		if errors.Is(err, errDeclined) {
			if _, perr := m.Copy().Pack(); perr == nil {
				if _, oerr := e.findOPT(&m); oerr == nil {
					t.Fatalf("declined a message miekg/dns packs: %v\n%s", err, m.String())
				}
			}
			return
		}
		if err != nil {
			t.Fatalf("%v\n%s", err, m.String())
		}
	})
}
