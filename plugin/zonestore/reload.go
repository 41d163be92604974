package zonestore

import (
	"errors"
	"fmt"
	"os"
	"syscall"
	"time"

	"github.com/ontimedns/ontime/zonestore"
)

// source is one zone file behind one origin.
type source struct {
	origin   string
	file     string
	interval time.Duration // 0: never reload
	byMtime  bool          // publish a changed file even if its serial did not increase
	digests  digests       // what is done with the zone's digest (ZONEMD, RFC 8976)
	seen     fileStamp     // the file as last read

	published func(*zonestore.Zone) // told of every version published
}

// fileStamp identifies a version of a file without reading it. The inode is
// in it because a ConfigMap update replaces the file through a symlink swap.
type fileStamp struct {
	mtime int64
	size  int64
	ino   uint64
	dev   uint64
}

func stamp(path string) (fileStamp, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return fileStamp{}, err
	}
	s := fileStamp{mtime: fi.ModTime().UnixNano(), size: fi.Size()}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		s.ino, s.dev = uint64(st.Ino), uint64(st.Dev)
	}
	return s, nil
}

// load reads the file if it changed since it was last read and publishes it
// when its serial is newer (or the file changed, with reload_by_mtime). A file
// that fails to parse or validate is never published: the old version keeps
// serving, and the failure is logged and counted.
func (s *source) load(store *zonestore.Store) error {
	st, err := stamp(s.file)
	if err != nil {
		loadFailures.WithLabelValues(s.origin).Inc()
		return err
	}
	old := store.Get(s.origin)
	if old != nil && st == s.seen {
		return nil
	}
	z, err := reread(old, s.file, s.origin, s.digests)
	if err != nil {
		loadFailures.WithLabelValues(s.origin).Inc()
		return err
	}
	err = store.Publish(old, z, s.byMtime)
	s.seen = st
	if errors.Is(err, zonestore.ErrStale) && old != nil && z.Serial() == old.Serial() {
		log.Infof("Zone %q in %q changed but its SOA serial %d did not: not reloaded", s.origin, s.file, z.Serial())
		return nil
	}
	if err != nil {
		loadFailures.WithLabelValues(s.origin).Inc()
		return err
	}
	s.published(z)
	if old != nil {
		log.Infof("Reloaded zone %q from %q: serial %d, generation %d", s.origin, s.file, z.Serial(), z.Generation())
	}
	return nil
}

// watch reloads the zone every interval until stop is closed.
func (s *source) watch(store *zonestore.Store, stop <-chan struct{}) {
	every(s.interval, stop, func() {
		if err := s.load(store); err != nil {
			log.Errorf("Failed to reload zone %q from %q, still serving the previous version: %v", s.origin, s.file, err)
		}
	})
}

// every calls f every interval until stop is closed; never, if interval is 0.
func every(interval time.Duration, stop <-chan struct{}, f func()) {
	if interval == 0 {
		return
	}
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		select {
		case <-stop:
			return
		case <-tick.C:
			f()
		}
	}
}

// digests is what a line does with its zones' digests (ZONEMD, RFC 8976).
type digests struct {
	verify   bool  // publish only a version whose digest verifies
	generate uint8 // the hash algorithm of a digest made for each version read from a file; 0: none
}

// reread parses a zone file: against the version being served, if any, so
// that an unchanged name is not built again (Zone.Reparse). A version
// whose digest does not verify, where the line verifies them, is an error,
// as a file that does not parse is; where the line makes them, the version
// returned holds its digest (a signed zone's cannot: logged, and served
// without).
func reread(old *zonestore.Zone, file, origin string, dg digests) (*zonestore.Zone, error) {
	var z *zonestore.Zone
	var err error
	if old != nil {
		z, err = old.ReparseFile(file)
	} else {
		z, err = zonestore.ParseFile(file, origin)
	}
	if err != nil {
		return nil, err
	}
	if dg.verify {
		if err := z.VerifyZONEMD(); err != nil {
			return nil, fmt.Errorf("%s: %w", file, err)
		}
	}
	if dg.generate != 0 {
		with, err := z.WithZONEMD(dg.generate)
		if err != nil {
			log.Errorf("Zone %q serial %d from %q is served without a digest of ours: %v", z.Origin(), z.Serial(), file, err)
			return z, nil
		}
		z = with
	}
	return z, nil
}
