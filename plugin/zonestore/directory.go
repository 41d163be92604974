package zonestore

import (
	"errors"
	"io/fs"
	"path/filepath"
	"regexp"
	"runtime"
	"runtime/debug"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coredns/coredns/plugin"
	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/gcpace"
	"github.com/ontimedns/ontime/zonestore"
)

// directory is a directory of zone files, one zone each, as the auto
// plugin reads it: every file whose name matches re is a zone, its origin
// the template expanded with re's submatches (db.ORIGIN by default). A scan
// adds the new files' zones, re-reads the changed ones and removes the
// zones whose file went; files replaced through a symlink swap (a mounted
// ConfigMap) are changes, seen by their inode.
type directory struct {
	dir      string
	re       *regexp.Regexp
	template string
	within   []string // the server block's zones: a file's origin must be at or below one
	interval time.Duration
	byMtime  bool
	digests  digests // what is done with its zones' digests (ZONEMD)

	published func(*zonestore.Zone) // told of every version published
	gone      func(origin string)   // told of every zone removed
	afterScan func()                // told of every scan's end (the block's catalog, generate_catalog)

	mu      sync.Mutex // one scan at a time
	files   map[string]*source
	scanned atomic.Bool // the first scan is done
	current atomic.Pointer[map[string]bool]
}

const (
	bulkLoad           = 1000 // zones in one scan, past which it is a bulk load
	bulkGCPercent      = 50   // GOGC during a bulk load: 25 gave 397 B/record and twice the load time, 100 gave 445
	defaultDirRegexp   = `db\.(.*)`
	defaultDirTemplate = "{1}"
	maxDirRegexpLen    = 10000
)

func newDirectory(dir, re, template string, within []string) (*directory, error) {
	if re == "" {
		re, template = defaultDirRegexp, defaultDirTemplate
	}
	if len(re) > maxDirRegexpLen {
		return nil, errors.New("directory regexp too large")
	}
	r, err := regexp.Compile(re)
	if err != nil {
		return nil, err
	}
	if r.NumSubexp() == 0 {
		return nil, errors.New("directory regexp needs at least one subexpression")
	}
	d := &directory{dir: dir, re: r, template: expandable(template), within: within, files: map[string]*source{}}
	d.current.Store(&map[string]bool{})
	return d, nil
}

// expandable turns a template as auto reads it ({1}) into one for
// regexp.Expand (${1}): as auto does, every { gets a $ before it.
func expandable(t string) string { return strings.ReplaceAll(t, "{", "${") }

// origin returns the zone a file name stands for, if it matches.
func (d *directory) origin(name string) (string, bool) {
	m := d.re.FindStringSubmatchIndex(name)
	if m == nil {
		return "", false
	}
	o := string(d.re.ExpandString(nil, d.template, name, m))
	if _, ok := dns.IsDomainName(o); !ok || o == "" {
		return "", false
	}
	return dns.CanonicalName(o), true
}

// scan reads the directory and brings the store in line with it: new and
// changed files parsed in parallel, then published together (one copy of
// the store's index for all the new zones), then the zones whose file
// went removed. A file that does not parse, or is not a valid zone, is
// logged by name and line and counted, and its zone keeps its last good
// version, if it had one; the others load.
func (d *directory) scan(store *zonestore.Store) {
	d.mu.Lock()
	defer d.mu.Unlock()
	root := d.dir
	if r, err := filepath.EvalSymlinks(d.dir); err == nil {
		root = r // filepath.Walk does not enter a root that is a symlink
	}
	found := map[string]string{}
	// WalkDir, not Walk: the type of each entry comes with the directory's
	// listing, where Walk asks for each file's (an lstat a file, half of
	// a rescan's time among 100,000 files; stamp's stat is the other).
	// A link, a ConfigMap's ..data among them, is not a directory here,
	// as under Walk's lstat.
	filepath.WalkDir(root, func(path string, e fs.DirEntry, err error) error {
		if err != nil {
			log.Warningf("Reading %s: %v", path, err)
			return nil
		}
		if e.IsDir() {
			if path != root && strings.HasPrefix(e.Name(), "..") {
				return filepath.SkipDir // a ConfigMap's ..data and ..TIMESTAMP: the files are their links
			}
			return nil
		}
		o, ok := d.origin(e.Name())
		if !ok {
			return nil
		}
		if plugin.Zones(d.within).Matches(o) == "" {
			log.Warningf("Zone file %s is for %q, outside this server block's zones: not served", path, o)
			return nil
		}
		if prev, dup := found[o]; dup {
			log.Warningf("Zone files %s and %s are both for %q: using %s", prev, path, o, prev)
			return nil
		}
		found[o] = path
		return nil
	})

	// Sources for the files found; a file that moved is a new source.
	var work []*source
	for o, path := range found {
		s := d.files[o]
		if s == nil || s.file != path {
			s = &source{origin: o, file: path, byMtime: d.byMtime, digests: d.digests, published: d.published}
			d.files[o] = s
		}
		work = append(work, s)
	}
	sort.Slice(work, func(i, j int) bool { return work[i].origin < work[j].origin })

	// Parse what changed, on every CPU. A bulk load (the first scan of a
	// large directory) collects garbage often: the parser's temporaries
	// then free room that the zones' records fill, instead of leaving
	// half-empty pages behind them (resident memory per record,
	// bench/zones.sh).
	if len(work) >= bulkLoad && d.files != nil {
		defer gcpace.Hold()() // the pace is this load's until it ends
		defer debug.SetGCPercent(debug.SetGCPercent(bulkGCPercent))
	}
	// Parse what changed, on every CPU.
	type parsed struct {
		s   *source
		old *zonestore.Zone
		z   *zonestore.Zone
		st  fileStamp
		err error
	}
	results := make([]parsed, len(work))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := int(next.Add(1) - 1); i < len(work); i = int(next.Add(1) - 1) {
				s := work[i]
				r := parsed{s: s, old: store.Get(s.origin)}
				r.st, r.err = stamp(s.file)
				if r.err == nil && (r.old == nil || r.st != s.seen) {
					r.z, r.err = reread(r.old, s.file, s.origin, d.digests)
				}
				results[i] = r
			}
		}()
	}
	wg.Wait()

	var changes []zonestore.Change
	var changed []parsed
	for _, r := range results {
		switch {
		case r.err != nil:
			loadFailures.WithLabelValues(r.s.origin).Inc()
			log.Errorf("Failed to load zone %q from %q, %s: %v", r.s.origin, r.s.file, keeping(r.old), r.err)
		case r.z != nil:
			changes = append(changes, zonestore.Change{Old: r.old, New: r.z, Force: d.byMtime})
			changed = append(changed, r)
		}
	}
	for i, err := range store.PublishAll(changes) {
		r := changed[i]
		r.s.seen = r.st
		switch {
		case errors.Is(err, zonestore.ErrStale) && r.old != nil && r.z.Serial() == r.old.Serial():
			log.Infof("Zone %q in %q changed but its SOA serial %d did not: not reloaded", r.s.origin, r.s.file, r.z.Serial())
		case err != nil:
			loadFailures.WithLabelValues(r.s.origin).Inc()
			log.Errorf("Failed to publish zone %q from %q, %s: %v", r.s.origin, r.s.file, keeping(r.old), err)
		default:
			d.published(r.z)
			if r.old != nil {
				log.Infof("Reloaded zone %q from %q: serial %d, generation %d", r.s.origin, r.s.file, r.z.Serial(), r.z.Generation())
			}
		}
	}

	var gone []string
	for o := range d.files {
		if _, ok := found[o]; !ok {
			gone = append(gone, o)
			delete(d.files, o)
			log.Infof("Zone %q: its file is gone, no longer served", o)
		}
	}
	store.RemoveAll(gone)
	for _, o := range gone {
		d.gone(o)
	}
	if len(changes) >= bulkLoad {
		// A bulk load leaves the parser's garbage (about as much again as
		// the zones): give it back now rather than at the GC's leisure,
		// so resident memory is what the zones hold (bench/zones.sh).
		debug.FreeOSMemory()
	}
	now := make(map[string]bool, len(d.files))
	for o := range d.files {
		now[o] = true
	}
	d.current.Store(&now)
	d.scanned.Store(true)
	dirZones.WithLabelValues(d.dir).Set(float64(len(now)))
	if d.afterScan != nil {
		d.afterScan()
	}
}

func keeping(old *zonestore.Zone) string {
	if old == nil {
		return "not served"
	}
	return "still serving the previous version"
}

// serves reports whether the directory holds a file for origin.
func (d *directory) serves(origin string) bool { return (*d.current.Load())[origin] }

// watch rescans every interval until stop is closed.
func (d *directory) watch(store *zonestore.Store, stop <-chan struct{}) {
	every(d.interval, stop, func() { d.scan(store) })
}
