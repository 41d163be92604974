package secondary

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/ontimedns/ontime/zonestore"
)

// A secondary zone held only in memory is lost with the process: a server
// restarted while its primaries are unreachable answers SERVFAIL for it
// until they come back, though the version it served was still good until
// its SOA expire. With Config.File set, every version published is written
// there, and Scheduler.Add loads the file before its first refresh, as Knot (its
// zone file and journal), NSD and BIND do with theirs. The expire timer
// (RFC 1034 section 4.3.5) runs from the last good refresh; the file's
// modification time carries it across a restart, as BIND's does: each good
// refresh that brings nothing new touches the file. A copy loaded past its
// expire is answered SERVFAIL, as it would have been had the process lived,
// and is there for an IXFR from its serial.

// A copy is written beside its file and renamed over it, so that a crash
// of the process leaves the copy before or this one, never part of one. It
// is not synced to the disk: a sync a copy (the file's and its
// directory's) is a wait on the disk for each of a catalog's 100,000
// members as it is transferred. A copy cut short by a power cut, or
// emptied, would still load, as a zone without its last records; so a
// copy ends with a line that counts them (copyEnd), and one that does not
// end so, or whose count is not its records', is refused as any broken
// copy: the zone waits for its first transfer, as it would have with no
// copy.
const copyEnd = "; the end of the copy: %d records\n"

// save writes z to path, beside it first, then renamed over it.
func save(path string, z *zonestore.Zone) (err error) {
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			f.Close()
			os.Remove(f.Name())
		}
	}()
	// A small buffer: one of 64 kB a save, for a zone of a few hundred
	// octets, was most of what 100,000 catalog members' saves allocated,
	// and the collections it brought on marked the whole store each time;
	// the text made whole, a large zone's grew to twice its size, copied.
	w := bufio.NewWriterSize(f, 4<<10)
	fmt.Fprintf(w, "; %s serial %d, as last transferred (written by ontime's secondary at %s)\n",
		z.Origin(), z.Serial(), time.Now().UTC().Format(time.RFC3339))
	n, err := z.WriteText(w)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, copyEnd, n)
	if err = w.Flush(); err != nil {
		return err
	}
	if err = f.Close(); err != nil {
		return err
	}
	return os.Rename(f.Name(), path)
}

// loadSaved reads the copy at path: the version it holds, and the time of
// the last good refresh (the file's modification time, never later than
// now: a clock set back must not stretch the expire).
func loadSaved(path, origin string) (*zonestore.Zone, time.Time, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, time.Time{}, err
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, time.Time{}, err
	}
	text, err := io.ReadAll(f)
	if err != nil {
		return nil, time.Time{}, err
	}
	// The last line counts the records; none, or another count: cut short.
	body := bytes.TrimSuffix(text, []byte("\n"))
	last := body[bytes.LastIndexByte(body, '\n')+1:]
	var n int
	if _, err := fmt.Sscanf(string(last)+"\n", copyEnd, &n); err != nil {
		return nil, time.Time{}, fmt.Errorf("not a whole copy: its last line is not %q", fmt.Sprintf(copyEnd, 0))
	}
	// Parse, not ParseFile: the text kept for a re-read would only take
	// memory, since the next version comes by transfer.
	z, err := zonestore.Parse(bytes.NewReader(text), origin, path)
	if err != nil {
		return nil, time.Time{}, err
	}
	if z.Records() != n {
		return nil, time.Time{}, fmt.Errorf("not a whole copy: %d records, its last line says %d", z.Records(), n)
	}
	refreshed := fi.ModTime()
	if now := time.Now(); refreshed.After(now) {
		refreshed = now
	}
	return z, refreshed, nil
}

// savedCopy is what Config.File holds, as far as this process knows.
type savedCopy struct {
	mu     sync.Mutex
	serial uint32
	known  bool // the file holds the version of serial
}

// restore publishes the copy in Config.File, if there is one, before the
// first refresh, its expire timer running from its last good refresh. A
// copy that does not load (or verify, with Config.Verify) is reported and
// left for the first transfer to replace.
func (s *Zone) restore() {
	z, refreshed, err := loadSaved(s.file, s.origin)
	if errors.Is(err, fs.ErrNotExist) {
		return
	}
	if err == nil {
		err = s.verify(z)
	}
	if err == nil {
		err = s.sized(z)
	}
	expired := false
	if err == nil {
		if expired = time.Since(refreshed) >= s.expireOf(z); expired {
			z = z.WithExpired(true)
		}
		err = s.publishFresh(nil, z, true, refreshed)
	}
	if err != nil {
		s.event(Restored, nil, fmt.Errorf("saved copy %s: %w", s.file, err))
		return
	}
	s.saved.mu.Lock()
	s.saved.serial, s.saved.known = z.Serial(), true
	s.saved.mu.Unlock()
	if expired {
		s.cfg.Logf("Zone %q: its saved copy (serial %d) was last refreshed at %s, longer ago than its expire (%s): answering SERVFAIL until a primary answers",
			s.origin, z.Serial(), refreshed.UTC().Format(time.RFC3339), s.expireOf(z))
	}
	s.event(Restored, z, nil)
}

// keepSaved makes Config.File hold the version served, after a good
// refresh: written where the file holds another version (or this process
// does not know which), else touched, its time that of this refresh (less
// what a primary's EXPIRE took off, expire.go).
func (s *Zone) keepSaved() {
	cur := s.cfg.Store.Get(s.origin)
	if s.file == "" || cur == nil {
		return
	}
	// Under pub: a zone removed (its copy dropped, or about to be, and
	// perhaps a new zone of its origin about to read the file) writes none.
	s.pub.Lock()
	defer s.pub.Unlock()
	if s.retired {
		return
	}
	s.saved.mu.Lock()
	defer s.saved.mu.Unlock()
	fresh := time.Unix(0, s.lastOK.Load())
	if s.saved.known && s.saved.serial == cur.Serial() {
		if os.Chtimes(s.file, fresh, fresh) == nil {
			return
		}
		// Gone, or not ours to touch: written again below.
	}
	err := save(s.file, cur)
	if err == nil && time.Since(fresh) > time.Second {
		err = os.Chtimes(s.file, fresh, fresh) // written now, refreshed (on the EXPIRE's word) before
	}
	if err != nil {
		s.saved.known = false
		s.event(Saved, nil, fmt.Errorf("saving a copy to %s: %w", s.file, err))
		return
	}
	s.saved.serial, s.saved.known = cur.Serial(), true
}
