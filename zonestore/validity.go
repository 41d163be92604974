package zonestore

import (
	"time"

	"github.com/miekg/dns"
)

// A pre-signed zone is served as its signer signed it: nothing here signs
// again, and once a signature is past its expiration a validating resolver
// answers SERVFAIL for the RRset it covers (RFC 4035 section 5.3.1). The
// signer must sign again in time. Validity says until when it has, so
// that a metric can be alerted on and a log can say so before resolvers do.

// Validity is the span in which every signature of a zone version is
// valid: from the latest inception to the earliest expiration (RFC 4034
// section 3.1.5), and the RRsets ("owner TYPE", the type covered) whose
// signatures set each end.
type Validity struct {
	From, Until       time.Time
	FromSet, UntilSet string
	Signatures        int // signatures read
}

// Validity returns the span in which every signature of z is valid, its
// times read in serial number arithmetic around now (RFC 4034 section
// 3.1.5: a time is the one within 68 years of now); false where z has no
// signature. It reads every signature: for whoever publishes a version,
// never for a query.
func (z *Zone) Validity(now time.Time) (Validity, bool) {
	var v Validity
	at := uint32(now.Unix())
	// Offsets from now, in seconds, of the latest inception and the
	// earliest expiration so far.
	var from, until int64
	read := func(sigs []dns.RR) {
		for _, rr := range sigs {
			sig, ok := rr.(*dns.RRSIG)
			if !ok {
				continue
			}
			in, ex := int64(int32(sig.Inception-at)), int64(int32(sig.Expiration-at))
			if v.Signatures == 0 || in > from {
				from, v.FromSet = in, sig.Hdr.Name+" "+dns.TypeToString[sig.TypeCovered]
			}
			if v.Signatures == 0 || ex < until {
				until, v.UntilSet = ex, sig.Hdr.Name+" "+dns.TypeToString[sig.TypeCovered]
			}
			v.Signatures++
		}
	}
	for _, n := range z.allNodes() {
		for i := range n.rrsets {
			read(n.rrsets[i].sigs)
		}
	}
	for _, n3 := range z.nsec3 {
		read(n3.sigs)
	}
	if v.Signatures == 0 {
		return v, false
	}
	base := now.Truncate(time.Second)
	v.From, v.Until = base.Add(time.Duration(from)*time.Second), base.Add(time.Duration(until)*time.Second)
	return v, true
}
