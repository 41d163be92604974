package zonestore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/miekg/dns"
)

// storage is the directory where the block's secondary and catalog zones,
// and the catalogs' members, keep their saved copies (`storage DIR`, as
// Knot's option of that name): each version transferred is written there,
// and a server started while its primaries are unreachable serves the
// copies until their SOA expire (zonestore/secondary/stored.go).
type storage string

// openStorage makes dir, if it is not there, and checks that a copy can be
// written in it: at setup, not at the first transfer.
func openStorage(dir string) (storage, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	f, err := os.CreateTemp(dir, ".write-check-*")
	if err != nil {
		return "", fmt.Errorf("cannot write in %s: %w", dir, err)
	}
	f.Close()
	os.Remove(f.Name())
	return storage(dir), nil
}

// file is where the zone of origin keeps its copy, "" without storage: the
// name in lowercase without its final dot (the root, "root"), ".zone"
// after it. A name comes from a catalog, which is the primary's data, so
// any octet but a letter, digit, hyphen, underscore or the dot between
// labels is written as %XX: no name can reach outside the directory or
// take another's file.
func (s storage) file(origin string) string {
	if s == "" {
		return ""
	}
	name := strings.TrimSuffix(dns.CanonicalName(origin), ".") // lowercase
	if name == "" {
		name = "root"
	}
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z', c >= '0' && c <= '9', c == '-', c == '_', c == '.' && i > 0 && name[i-1] != '.':
			b.WriteByte(c)
		default:
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return filepath.Join(string(s), b.String()+".zone")
}

// drop removes the copy of a zone no longer served (a catalog's member it
// dropped): were the catalog to name the zone again, a stale copy would be
// served until the first transfer.
func (s storage) drop(origin string) {
	if f := s.file(origin); f != "" {
		if err := os.Remove(f); err != nil && !os.IsNotExist(err) {
			log.Warningf("Zone %q removed, its saved copy not: %v", origin, err)
		}
	}
}
