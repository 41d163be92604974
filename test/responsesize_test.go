package test

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/conformance"
	"github.com/ontimedns/ontime/internal/freeport"
)

// TestResponseSizeAsMsgLen: the response sizes the metrics record where
// fastpack, the writer just below them, counts each answer's Msg.Len as it
// packs it (wire.Encoder's Len) are the ones they record where they read
// Msg.Len themselves, as the stock plugin does: behind rrl's writer, which
// they do not look through. The conformance corpus (signed zones with NSEC
// and NSEC3, wildcards, delegations, CNAME chains, DNAMEs, truncated
// answers, TCP) is asked twice of each server, so that the second asking
// is replayed where replay keeps it; the response size histograms
// (buckets, sum and count) must come out the same.
func TestResponseSizeAsMsgLen(t *testing.T) {
	zs, origins := zonestoreLines(conformanceZones(t), "")
	packedProm := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	readProm := fmt.Sprintf("127.0.0.1:%d", freeport.Get(t))
	packed := startCoreDNSWith(t, onePAnswer, "    prometheus "+packedProm+"\n    codel\n    fastpack\n"+zs, origins...)
	read := startCoreDNSWith(t, onePAnswer, "    prometheus "+readProm+"\n    codel\n    rrl {\n        rate 100000000\n    }\n    fastpack\n"+zs, origins...)

	asked := 0
	for range 2 {
		for _, q := range conformance.Corpus(origins) {
			m := q.Msg()
			net := "udp"
			if q.TCP {
				net = "tcp"
			}
			c := &dns.Client{Net: net, Timeout: 2 * time.Second}
			for _, s := range []*server{packed, read} {
				if _, _, err := c.Exchange(m.Copy(), s.addr); err != nil {
					t.Fatalf("%s over %s: %v", q, net, err)
				}
			}
			asked++
		}
	}
	got, want := responseSizes(t, packedProm), responseSizes(t, readProm)
	if len(got) == 0 || !slices.Equal(got, want) {
		t.Fatalf("response sizes counted as packed:\n%s\nread from Msg.Len:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	t.Logf("%d queries; %s", asked, got[len(got)-1])
}

// responseSizes are the response size histograms' lines of a scrape, but
// for the server label, sorted.
func responseSizes(t *testing.T, addr string) []string {
	t.Helper()
	server := regexp.MustCompile(`server="[^"]*"`)
	var lines []string
	for _, l := range strings.Split(string(scrape(t, addr)), "\n") {
		if strings.HasPrefix(l, "coredns_dns_response_size_bytes") {
			lines = append(lines, server.ReplaceAllString(l, `server=""`))
		}
	}
	slices.Sort(lines)
	return lines
}
