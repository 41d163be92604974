package zonestore

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/ontimedns/ontime/zonestore"
)

// signedUntil publishes in store a version of origin, of serial, signed
// (by no key: only the signatures' times are read) until until, its
// DNSKEY's signature an hour longer.
func signedUntil(t *testing.T, store *zonestore.Store, origin string, serial int, until time.Time) {
	t.Helper()
	const sig = "RRSIG %s 13 2 300 %s 20260101000000 12345 %s dGhpcyBpcyBub3QgYSBzaWduYXR1cmU="
	exp, later := until.UTC().Format("20060102150405"), until.Add(time.Hour).UTC().Format("20060102150405")
	text := fmt.Sprintf("$ORIGIN %s\n@ 300 SOA ns1 hostmaster %d 7200 3600 1209600 300\n@ 300 NS ns1\nns1 300 A 192.0.2.53\n"+
		"@ 300 DNSKEY 257 3 13 dGhpcyBpcyBub3QgYSBrZXk=\n@ 300 "+sig+"\n@ 300 "+sig+"\n", origin, serial, "SOA", exp, origin, "DNSKEY", later, origin)
	z, err := zonestore.Parse(strings.NewReader(text), origin, "db")
	if err != nil {
		t.Fatal(err)
	}
	if !z.Signed() {
		t.Fatal("the zone is not signed")
	}
	if err := store.Publish(store.Get(origin), z, true); err != nil {
		t.Fatal(err)
	}
}

// TestSignatureWatch: a signed zone is reported once when its earliest
// signature comes within a day of expiring, once when it has expired, and
// again after a version signed anew comes due in its turn; an unsigned
// zone never.
func TestSignatureWatch(t *testing.T) {
	store := zonestore.NewStore()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	signedUntil(t, store, "example.org.", 1, now.Add(30*time.Hour))
	plain, err := zonestore.Parse(strings.NewReader("$ORIGIN example.net.\n@ 300 SOA ns1 hostmaster 1 7200 3600 1209600 300\n@ 300 NS ns1\nns1 300 A 192.0.2.53\n"), "example.net.", "db")
	if err != nil {
		t.Fatal(err)
	}
	store.Publish(nil, plain, false)

	var w spanNotes
	levels := func(at time.Duration) string {
		var out []string
		for _, e := range w.check(store, now.Add(at)) {
			out = append(out, fmt.Sprintf("%s %d: %d (%s)", e.z.Origin(), e.z.Serial(), e.level, e.v.UntilSet))
		}
		return strings.Join(out, ", ")
	}
	// The steps, in order: 30 h left, 25 h, 23 h (due), 20 h (due again:
	// nothing new), past it (expired), and past it again (nothing new).
	for _, step := range []struct {
		at   time.Duration
		want string
	}{
		{0, ""},
		{5 * time.Hour, ""},
		{7 * time.Hour, "example.org. 1: 1 (example.org. SOA)"},
		{10 * time.Hour, ""},
		{31 * time.Hour, "example.org. 1: 2 (example.org. SOA)"},
		{32 * time.Hour, ""},
	} {
		if got := levels(step.at); got != step.want {
			t.Errorf("at +%s: %q, want %q", step.at, got, step.want)
		}
	}
	// Signed again, until 80 h from the start: valid, then due in its turn.
	signedUntil(t, store, "example.org.", 2, now.Add(80*time.Hour))
	if got := levels(33 * time.Hour); got != "" {
		t.Errorf("signed again: %q, want nothing", got)
	}
	if got, want := levels(57*time.Hour), "example.org. 2: 1 (example.org. SOA)"; got != want {
		t.Errorf("the new version within a day of expiring: %q, want %q", got, want)
	}
}

// TestSignatureWatchTakesPublishedSpans: the watch reads the span a
// version was published with, not its signatures again, and does not log
// again an expiry that publishing logged.
func TestSignatureWatchTakesPublishedSpans(t *testing.T) {
	store := zonestore.NewStore()
	now := time.Date(2026, 12, 7, 12, 0, 0, 0, time.UTC)
	var w spanNotes

	signedUntil(t, store, "example.org.", 1, now.Add(-time.Hour))
	z := store.Get("example.org.")
	v, signed := signatures(z, now)
	w.note(z, v, signed, now) // as published does, after logging it expired
	if got := w.check(store, now.Add(time.Minute)); len(got) != 0 {
		t.Errorf("an expiry logged at publishing, logged again: %v", got)
	}

	// A span noted that the signatures do not say: the watch goes by the note.
	signedUntil(t, store, "example.org.", 2, now.Add(30*time.Hour))
	z = store.Get("example.org.")
	v, signed = signatures(z, now)
	v.Until = now.Add(2 * time.Hour)
	w.note(z, v, signed, now)
	if got := w.check(store, now); len(got) != 1 || got[0].level != signaturesExpireSoon {
		t.Errorf("the noted span (due in 2 h): %v", got)
	}

	// A zone removed is forgotten.
	w.forget("example.org.")
	if _, ok := w.m.Load("example.org."); ok {
		t.Error("a removed zone's note kept")
	}
}
