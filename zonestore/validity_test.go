package zonestore

import (
	"fmt"
	"testing"
	"time"
)

// TestValidity: a zone's signatures are valid from the latest inception
// to the earliest expiration, NSEC3 records' signatures included, read in
// serial number arithmetic around now (across 2106's wrap too); a zone
// without signatures has no span.
func TestValidity(t *testing.T) {
	const sig = "13 3 3600 %d %d 12345 example.org. dGhpcyBpcyBub3QgYSBzaWduYXR1cmU="
	signed := func(now int64, sigs ...[3]any) string {
		text := head + "@ NSEC3PARAM 1 0 0 -\n8um1kjcjmofvvmq7cb0op7jt39lg8r9j NSEC3 1 0 0 - 8um1kjcjmofvvmq7cb0op7jt39lg8r9j A\n"
		for _, s := range sigs {
			text += fmt.Sprintf("%s RRSIG %s "+sig+"\n", s[0], s[1], uint32(now+s[2].([2]int64)[1]), uint32(now+s[2].([2]int64)[0]))
		}
		return text
	}
	span := func(in, ex int64) [2]int64 { return [2]int64{in, ex} }
	day := int64(86400)
	for _, tc := range []struct {
		name              string
		now               int64
		sigs              [][3]any
		from, until       int64 // offsets from now
		fromSet, untilSet string
	}{
		{"one", 1796083200, [][3]any{{"@", "SOA", span(-day, 14*day)}}, -day, 14 * day, "example.org. SOA", "example.org. SOA"},
		{"the latest and the earliest", 1796083200, [][3]any{
			{"@", "SOA", span(-day, 14*day)}, {"ns1", "A", span(-3*day, 2*day)}, {"@", "NS", span(-day/2, 30*day)},
		}, -day / 2, 2 * day, "example.org. NS", "ns1.example.org. A"},
		{"expired", 1796083200, [][3]any{{"@", "SOA", span(-30*day, -day)}, {"ns1", "A", span(-day, 14*day)}}, -day, -day, "ns1.example.org. A", "example.org. SOA"},
		{"an NSEC3 record's", 1796083200, [][3]any{
			{"@", "SOA", span(-day, 14*day)}, {"8um1kjcjmofvvmq7cb0op7jt39lg8r9j", "NSEC3", span(-day, day)},
		}, -day, day, "example.org. SOA", "8um1kjcjmofvvmq7cb0op7jt39lg8r9j.example.org. NSEC3"},
		{"across the wrap", 1<<32 - 3600, [][3]any{{"@", "SOA", span(-day, 14*day)}}, -day, 14 * day, "example.org. SOA", "example.org. SOA"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			z, err := parse(t, signed(tc.now, tc.sigs...))
			if err != nil {
				t.Fatal(err)
			}
			now := time.Unix(tc.now, 0)
			v, ok := z.Validity(now)
			if !ok || v.Signatures != len(tc.sigs) {
				t.Fatalf("Validity: %+v %v, want %d signatures", v, ok, len(tc.sigs))
			}
			if got, want := v.From.Unix()-tc.now, tc.from; got != want || v.FromSet != tc.fromSet {
				t.Errorf("from %+d s (%s), want %+d s (%s)", got, v.FromSet, want, tc.fromSet)
			}
			if got, want := v.Until.Unix()-tc.now, tc.until; got != want || v.UntilSet != tc.untilSet {
				t.Errorf("until %+d s (%s), want %+d s (%s)", got, v.UntilSet, want, tc.untilSet)
			}
		})
	}
	z, err := parse(t, head)
	if err != nil {
		t.Fatal(err)
	}
	if v, ok := z.Validity(time.Now()); ok {
		t.Errorf("an unsigned zone: %+v, want no span", v)
	}
}
