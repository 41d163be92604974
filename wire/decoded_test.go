package wire

import (
	"bytes"
	"encoding/base64"
	"math/rand/v2"
	"strings"
	"testing"
)

// TestDecodedIsDecoding: a thousand base64 texts, four times the slots,
// each decoded many times in random order, some at new addresses with the
// same text (decoded again, not found): every decode gives the bytes
// encoding/base64 gives, whether remembered, evicted by another text in
// the same slot, or new.
func TestDecodedIsDecoding(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	blobs := make([][]byte, 4*decodedSlots)
	texts := make([]string, len(blobs))
	for i := range blobs {
		blobs[i] = make([]byte, 8+rng.IntN(300))
		for j := range blobs[i] {
			blobs[i][j] = byte(rng.Uint32())
		}
		texts[i] = base64.StdEncoding.EncodeToString(blobs[i])
	}
	var d decoded
	hits := 0
	for range 8 * len(texts) {
		i := rng.IntN(len(texts))
		s := texts[i]
		if rng.IntN(4) == 0 {
			s = strings.Clone(s) // the same text at another address
		}
		if slotOf(&d, s) != nil {
			hits++
		}
		got, err := d.appendBase64([]byte{0xEE}, s)
		if err != nil {
			t.Fatal(err)
		}
		if got[0] != 0xEE || !bytes.Equal(got[1:], blobs[i]) {
			t.Fatalf("text %d decoded to %x, want %x", i, got[1:], blobs[i])
		}
	}
	if hits == 0 {
		t.Fatal("nothing was ever remembered: the test tests nothing")
	}
}

// TestDecodedRemembersNoError: a text that does not decode fails as
// encoding/base64 fails, every time, and takes no slot.
func TestDecodedRemembersNoError(t *testing.T) {
	bad := strings.Repeat("QUJD", 10) + "!!!!"
	_, want := base64.StdEncoding.DecodeString(bad)
	var d decoded
	for range 2 {
		if _, err := d.appendBase64(nil, bad); err == nil || err.Error() != want.Error() {
			t.Fatalf("error %v, want %v", err, want)
		}
	}
	if slotOf(&d, bad) != nil {
		t.Fatal("a text that does not decode was remembered")
	}
}

// slotOf returns the slot that remembers s, or nil.
func slotOf(d *decoded, s string) *decodedSlot {
	for i := range d.slots {
		if sameString(d.slots[i].text, s) && s != "" {
			return &d.slots[i]
		}
	}
	return nil
}
