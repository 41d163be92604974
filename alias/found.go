package alias

import "github.com/miekg/dns"

// Found is what a zone reports when an A or AAAA question reaches a name
// that holds an ALIAS record (CNAMEs followed).
type Found struct {
	Alias  dns.RR // the ALIAS record, owner spelled as in the answer
	SOA    dns.RR // the zone's SOA as negative answers carry it
	Signed bool   // the zone is pre-signed
}

// A Reporter wants to hear of ALIAS records: the alias plugin's
// ResponseWriter is one. The zone plugin calls Report before it writes
// its answer, which is then what the zone holds (the name's own
// addresses, or NODATA).
type Reporter interface {
	Report(Found)
}
