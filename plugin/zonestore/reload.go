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
	verify   bool          // publish only a version whose digest verifies (ZONEMD, RFC 8976)
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
	z, err := reread(old, s.file, s.origin, s.verify)
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

// reread parses a zone file: against the version being served, if any, so
// that an unchanged name is not built again (Zone.Reparse). With verify,
// a version whose digest does not verify (RFC 8976) is an error, as a
// file that does not parse is.
func reread(old *zonestore.Zone, file, origin string, verify bool) (*zonestore.Zone, error) {
	var z *zonestore.Zone
	var err error
	if old != nil {
		z, err = old.ReparseFile(file)
	} else {
		z, err = zonestore.ParseFile(file, origin)
	}
	if err == nil && verify {
		if err = z.VerifyZONEMD(); err != nil {
			err = fmt.Errorf("%s: %w", file, err)
			z = nil
		}
	}
	return z, err
}
