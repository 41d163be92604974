package codel

import "testing"

// TestReleaseAtLeast reads kernel releases as uname gives them.
func TestReleaseAtLeast(t *testing.T) {
	for _, c := range []struct {
		release string
		want    bool
	}{
		{"6.18.44-fc-v1252", true}, {"6.2.0", true}, {"6.1.90-generic", false},
		{"5.15.0-91-generic", false}, {"7.0", true}, {"6.2-rc1", true}, {"6.1", false}, {"weird", true},
	} {
		if got := releaseAtLeast(c.release, 6, 2); got != c.want {
			t.Errorf("%q: %v, want %v", c.release, got, c.want)
		}
	}
}
