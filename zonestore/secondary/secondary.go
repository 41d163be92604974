// Package secondary keeps a zone of a zonestore.Store in step with its
// primaries by zone transfer: AXFR first (RFC 5936), then IXFR (RFC 1995)
// whenever the primary's serial moves on, on NOTIFY (RFC 1996) and by the
// SOA's refresh and retry timers; past the SOA's expire timer without a
// refresh, the zone is marked expired and answered with SERVFAIL. Every
// transferred version is built whole off to the side and published as one
// generation: a query never sees half a transfer, and a transfer that
// fails (truncated, out of order, a difference that does not apply) never
// replaces the version being served. With Config.File, each version is
// also saved, and served from there after a restart (stored.go).
package secondary

import (
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/zonestore"
)

// TSIG is a transaction key for transfers and SOA queries.
type TSIG struct {
	Name      string // fully qualified
	Algorithm string // fully qualified, dns.HmacSHA256 by default
	Secret    string // base64
}

// Config says which zone to keep, from where, into which store.
type Config struct {
	Origin    string
	Primaries []string // host:port, tried in order
	TSIG      *TSIG
	Store     *zonestore.Store
	Timeout   time.Duration // each query and each transfer message (default 10s)
	// Events, if set, hears of every transfer: the zone's origin, the
	// transfer's kind ("axfr", "ixfr"), the version it published (nil for
	// none), and its error. The origin is given so that the zones of a
	// catalog share one func: a closure a zone was 215 bytes of each of
	// its 100,000 members (bench/README.md, 2026-12-07).
	Events func(origin, kind string, z *zonestore.Zone, err error)
	Logf   func(format string, args ...any)
	// Verify, if set, checks each version transferred before it is
	// published (the zone's digest, RFC 8976); one it fails is not, and
	// the transfer fails with its error.
	Verify func(*zonestore.Zone) error
	// File, if set, is where every version published is saved, and where
	// Scheduler.Add finds the version to serve before its first refresh
	// (stored.go).
	File string
	// Limits bound what the primary's zone may ask of this server.
	Limits Limits
}

// Limits bound what a primary's zone may ask of this server: how often
// it is refreshed, how long it is served without a refresh, and how
// large it may be. A primary's SOA with a refresh interval of one second,
// among a catalog's 100,000 members, would have this server ask it
// 100,000 questions a second; one whose transfer never ends would have
// it take every record into memory. The timers as Knot bounds them
// (refresh-min-interval and its kin), the size as BIND does (max-records).
type Limits struct {
	Refresh, Retry, Expire Bounds
	// MaxRecords, if not 0, is the most records a version may have: an
	// AXFR of more is cut off and fails, an IXFR of more falls back to
	// AXFR, and a version built of more is not published.
	MaxRecords int
	// TransferTime, if not 0, is the longest a transfer may take (BIND's
	// max-transfer-time-in); one that takes longer is cut off and fails.
	TransferTime time.Duration
}

// Bounds hold an SOA timer within [Min, Max]; a zero bound is no bound.
type Bounds struct{ Min, Max time.Duration }

// of returns seconds of an SOA timer, held within b.
func (b Bounds) of(seconds uint32) time.Duration {
	d := time.Duration(seconds) * time.Second
	if b.Max > 0 {
		d = min(d, b.Max)
	}
	return max(d, b.Min)
}

// Kinds of transfer, as Events reports them.
const (
	AXFR    = "axfr"
	IXFR    = "ixfr"
	Current = "current" // the primary's serial is not newer: nothing to transfer
	SOA     = "soa"     // the query for the primary's serial (failures only)
	// The copy in Config.File: Restored, loaded before the first refresh;
	// Saved, written after a refresh (failures only).
	Restored = "restored"
	Saved    = "saved"
)

// Zone is one secondary zone.
type Zone struct {
	origin string  // fully qualified, lowercase
	file   string  // its saved copy (Config.File)
	cfg    *Config // its settings, its catalog's members' alike (Shared); Origin and File not read
	// lastOK is the unix nanoseconds of the last good refresh, or of New,
	// less what a primary's EXPIRE took off the expire (expire.go); lease,
	// the end of the expire from it, which every version published shares.
	lastOK  atomic.Int64
	lease   *zonestore.Lease
	refused atomic.Bool // no version, and every primary refused the last refresh (refused.go)
	saved   savedCopy
	slot    slot                      // its place in the Scheduler that refreshes it
	sched   atomic.Pointer[Scheduler] // that Scheduler, for Notify; nil before Add
	// pub is held to publish a version or write its copy, and to retire:
	// once removed from its Scheduler, the zone publishes and saves
	// nothing more, though a refresh was under way.
	pub     sync.Mutex
	retired bool
}

// New returns a secondary zone; a Scheduler keeps it (Scheduler.Add).
func New(cfg Config) *Zone { return NewMember(Shared(cfg), cfg.Origin, cfg.File) }

// Shared returns settings for zones that share them (NewMember): a
// catalog's members take their catalog's primaries, key, limits and
// funcs, and a copy of them each was 176 bytes of each of 100,000
// members (bench/README.md, 2026-12-07). Its Origin and File are not
// read.
func Shared(cfg Config) *Config {
	if cfg.Timeout <= 0 {
		cfg.Timeout = 10 * time.Second
	}
	if cfg.TSIG != nil && cfg.TSIG.Algorithm == "" {
		cfg.TSIG.Algorithm = dns.HmacSHA256
	}
	if cfg.Logf == nil {
		cfg.Logf = func(string, ...any) {}
	}
	return &cfg
}

// NewMember returns the secondary zone origin, with the settings shared
// (Shared), saved in file (Config.File; none where empty).
func NewMember(shared *Config, origin, file string) *Zone {
	z := &Zone{origin: dns.CanonicalName(origin), file: file, cfg: shared, lease: new(zonestore.Lease)}
	// A version may be held already (carried over a Corefile reload). Its
	// lease, the zone's before the reload, is this one's from now on, and
	// says when it was last refreshed (less what an EXPIRE took off); a
	// version without one (a file's zone become a secondary) counts its
	// expire from now, not from a refresh nobody remembers.
	cur := z.cfg.Store.Get(z.origin)
	fresh := time.Now()
	if cur != nil && cur.Lease() != nil {
		z.lease = cur.Lease()
		if until, ok := z.lease.Until(); ok {
			fresh = until.Add(-z.expireOf(cur))
		}
	}
	z.renew(fresh, cur)
	return z
}

// errRetired is a version a removed zone did not publish.
var errRetired = errors.New("the zone was removed: version not published")

// publish publishes z over old in the store, unless the zone is retired.
// A zone removed while its first transfer was under way would otherwise
// publish a zone no one serves on purpose: the store makes a place for a
// version over none, and a catalog's member it dropped, or a Corefile's
// zone gone, would be answered from then on, never refreshed. z shares
// the zone's lease.
func (s *Zone) publish(old, z *zonestore.Zone, force bool) error {
	s.pub.Lock()
	defer s.pub.Unlock()
	if s.retired {
		return errRetired
	}
	z.SetLease(s.lease)
	return s.cfg.Store.Publish(old, z, force)
}

// publishFresh is publish for a version refreshed at fresh (renewal):
// its expire counts from then, and its lease says so from its first
// answer on.
func (s *Zone) publishFresh(old, z *zonestore.Zone, force bool, fresh time.Time) error {
	s.pub.Lock()
	defer s.pub.Unlock()
	if s.retired {
		return errRetired
	}
	s.lease.Set(fresh.Add(s.expireOf(z)))
	z.SetLease(s.lease)
	if err := s.cfg.Store.Publish(old, z, force); err != nil {
		if cur := s.cfg.Store.Get(s.origin); cur != nil { // the lease of the version still served
			s.lease.Set(time.Unix(0, s.lastOK.Load()).Add(s.expireOf(cur)))
		}
		return err
	}
	s.lastOK.Store(fresh.UnixNano())
	return nil
}

// renew counts the expire timer from fresh, and has the lease of the
// versions served end an expire of cur's after it; a retired zone's
// lease is another's now, or no one's.
func (s *Zone) renew(fresh time.Time, cur *zonestore.Zone) {
	s.pub.Lock()
	defer s.pub.Unlock()
	if s.retired {
		return
	}
	s.lastOK.Store(fresh.UnixNano())
	if cur != nil {
		s.lease.Set(fresh.Add(s.expireOf(cur)))
	}
}

// retire makes the zone publish and save nothing more; it waits for a
// publish or a save under way.
func (s *Zone) retire() {
	s.pub.Lock()
	s.retired = true
	s.pub.Unlock()
}

// Origin returns the zone's origin.
func (s *Zone) Origin() string { return s.origin }

// Key returns the zone's TSIG key, nil if it has none: its transfers are
// signed with it, and so must a NOTIFY for it be.
func (s *Zone) Key() *TSIG { return s.cfg.TSIG }

// Limits returns the bounds on the zone's timers and size.
func (s *Zone) Limits() Limits { return s.cfg.Limits }

// IsPrimary reports whether ip is one of the zone's primaries: NOTIFY is
// taken from them only (RFC 1996 section 3.10).
func (s *Zone) IsPrimary(ip net.IP) bool {
	for _, p := range s.cfg.Primaries {
		host, _, err := net.SplitHostPort(p)
		if err == nil && net.ParseIP(host).Equal(ip) {
			return true
		}
	}
	return false
}

// Notify asks for a refresh as soon as a worker of its Scheduler is free
// (once the one under way has finished, if one is); it never blocks.
func (s *Zone) Notify() {
	if q := s.sched.Load(); q != nil {
		q.notify(s)
	}
}

// NotifyFrom is Notify for a NOTIFY that came from ip: its Scheduler
// forgets that the primaries at ip did not answer, if they had not.
func (s *Zone) NotifyFrom(ip net.IP) {
	if q := s.sched.Load(); q != nil {
		q.unreach.heardFrom(ip)
		q.notify(s)
	}
}

// NotifySerialFrom is NotifyFrom for a NOTIFY that carried the primary's
// SOA serial: a hint at its version (RFC 1996 section 3.7). A zone that
// serves that serial or a newer one is not refreshed, as BIND and
// PowerDNS do: a primary that starts again sends a NOTIFY for every zone
// it has, 100,000 catalog members among them, and each would otherwise
// ask it an SOA query to learn nothing. A zone expired, or not yet
// transferred, is refreshed. It reports whether a refresh was asked for.
func (s *Zone) NotifySerialFrom(ip net.IP, serial uint32) bool {
	if cur := s.cfg.Store.Get(s.origin); cur != nil && !cur.Expired() && !zonestore.SerialNewer(serial, cur.Serial()) {
		if q := s.sched.Load(); q != nil {
			q.unreach.heardFrom(ip)
		}
		return false
	}
	s.NotifyFrom(ip)
	return true
}

// Loaded reports whether the zone has been transferred once.
func (s *Zone) Loaded() bool { return s.cfg.Store.Get(s.origin) != nil }

// First retries before the zone was ever loaded, and the retry interval
// when the SOA gives none, are bounded so a new zone appears quickly.
const (
	firstRetry = time.Second
	maxFirst   = 30 * time.Second
)

// step is one turn of the zone on a worker of its Scheduler: a refresh,
// then the expiry checked and its timer set. It returns the wait before
// the next: the SOA's refresh interval after a success, its retry
// interval after a failure, and before any version a backoff from
// firstRetry to maxFirst.
func (s *Zone) step() time.Duration {
	err := s.Refresh()
	cur := s.cfg.Store.Get(s.origin)
	var wait time.Duration
	switch {
	case cur == nil:
		s.slot.backoff = min(s.slot.backoff*2, maxFirst)
		if err == nil {
			s.slot.backoff = firstRetry
		}
		wait = s.slot.backoff
	case err == nil:
		wait = s.cfg.Limits.Refresh.of(cur.SOA().Refresh)
	default:
		wait = s.cfg.Limits.Retry.of(cur.SOA().Retry)
	}
	s.armExpiry()
	return max(wait, 100*time.Millisecond)
}

// armExpiry marks the version held expired if its SOA expire has passed
// since the last good refresh, or sets the expiry timer for when it will.
func (s *Zone) armExpiry() {
	cur := s.cfg.Store.Get(s.origin)
	if cur == nil {
		return
	}
	s.checkExpiry(cur)
	if left := s.expiresIn(cur); left > 0 {
		if q := s.sched.Load(); q != nil {
			q.expireIn(s, left)
		}
	}
}

// scheduled reports whether the zone is in its Scheduler, not removed.
func (s *Zone) scheduled() bool {
	q := s.sched.Load()
	if q == nil {
		return false
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	return !s.slot.removed
}

// expire is the expiry timer's: the SOA expire may have passed since the
// last good refresh.
func (s *Zone) expire() {
	// A zone removed (a catalog's member dropped, a Corefile reloaded)
	// judges no version: one of its origin may be another zone's now,
	// whose last good refresh is not this one's.
	if !s.scheduled() {
		return
	}
	if cur := s.cfg.Store.Get(s.origin); cur != nil {
		s.checkExpiry(cur)
	}
}

func (s *Zone) expiresIn(cur *zonestore.Zone) time.Duration {
	if cur.Expired() {
		return 0
	}
	last := s.lastOK.Load()
	return time.Duration(last) + s.expireOf(cur) - time.Duration(time.Now().UnixNano())
}

// expireOf is how long z is served without a refresh: its SOA expire,
// within the limits.
func (s *Zone) expireOf(z *zonestore.Zone) time.Duration {
	return s.cfg.Limits.Expire.of(z.SOA().Expire)
}

// checkExpiry marks the zone expired once its SOA expire has passed since
// the last good refresh.
func (s *Zone) checkExpiry(cur *zonestore.Zone) {
	if cur.Expired() || s.expiresIn(cur) > 0 {
		return
	}
	if err := s.publish(cur, cur.WithExpired(true), true); err == nil {
		s.cfg.Logf("Zone %q expired: no refresh from its primaries for %s; answering SERVFAIL", s.origin, s.expireOf(cur))
	}
}

// Refresh asks the primaries for the zone's serial and transfers it when
// it is newer: IXFR when a version is held, falling back to AXFR when the
// IXFR fails or does not apply. Once the zone is scheduled, a primary its
// Scheduler holds unreachable is not asked (unreachable.go).
func (s *Zone) Refresh() error {
	cur := s.cfg.Store.Get(s.origin)
	var unreach *unreachable
	if q := s.sched.Load(); q != nil {
		unreach = &q.unreach
	}
	var errs []error
	refused := cur == nil // until a primary answers otherwise
	for _, primary := range s.cfg.Primaries {
		var err error
		if until, held := unreach.held(primary); held {
			err = fmt.Errorf("not asked: it did not answer the last queries; asked again from %s", until.Format(time.TimeOnly))
			s.event(firstKind(cur), nil, err)
		} else {
			err = s.refreshFrom(primary, cur)
			switch {
			case unreach == nil:
			case noAnswer(err):
				if hold := unreach.missed(primary); hold > 0 {
					s.cfg.Logf("Primary %s did not answer twice in a row (the last for zone %q): not asked for %s", primary, s.origin, hold)
				}
			default:
				if unreach.answered(primary) {
					s.cfg.Logf("Primary %s answers again (for zone %q)", primary, s.origin)
				}
			}
		}
		if err == nil {
			s.refused.Store(false)
			s.keepSaved()
			return nil
		}
		if errors.Is(err, errRetired) {
			return err // removed: no other primary to ask
		}
		refused = refused && refusal(err)
		errs = append(errs, fmt.Errorf("%s: %w", primary, err))
	}
	s.refused.Store(refused && len(errs) > 0)
	return errors.Join(errs...)
}

// firstKind is what a refresh asks first: the SOA when a version is held,
// else the whole zone.
func firstKind(cur *zonestore.Zone) string {
	if cur == nil {
		return AXFR
	}
	return SOA
}

// refreshFrom refreshes the zone from primary. Each way it succeeds
// counts the expire timer afresh (renewal): publishFresh, or current.
func (s *Zone) refreshFrom(primary string, cur *zonestore.Zone) error {
	if cur == nil {
		return s.axfr(primary, nil)
	}
	serial, expire, err := s.serial(primary)
	if err != nil {
		err = fmt.Errorf("SOA query: %w", err)
		s.event(SOA, nil, err)
		return err
	}
	if !zonestore.SerialNewer(serial, cur.Serial()) {
		s.current(cur, expire)
		return nil
	}
	if err := s.ixfr(primary, cur); err != nil {
		s.event(IXFR, nil, err)
		if noAnswer(err) || errors.Is(err, errTooSlow) { // an AXFR would hold the worker as long again
			return fmt.Errorf("IXFR: %w", err)
		}
		s.cfg.Logf("IXFR of %q from %s failed, falling back to AXFR: %v", s.origin, primary, err)
		return s.axfr(primary, cur)
	}
	return nil
}

// current is a refresh that found cur current (by the SOA's serial, or an
// IXFR's answer), with the primary's EXPIRE: the expire timer counts from
// now, less what the EXPIRE took off.
func (s *Zone) current(cur *zonestore.Zone, expire expireOption) {
	fresh := s.renewal(cur, expire, false)
	// Back in touch with a primary, an expired zone is served again; and
	// a version held without this zone's lease (a file's zone become a
	// secondary at a Corefile reload) is given it, for its EXPIRE.
	published := (cur.Expired() || cur.Lease() != s.lease) && s.publishFresh(cur, cur.WithExpired(false), true, fresh) == nil
	if !published { // publishFresh counts it from fresh where it publishes
		s.renew(fresh, cur)
	}
	s.event(Current, nil, nil)
}

func (s *Zone) event(kind string, z *zonestore.Zone, err error) {
	if errors.Is(err, errRetired) {
		return // no failure: the zone is no one's to report on
	}
	if s.cfg.Events != nil {
		s.cfg.Events(s.origin, kind, z, err)
	}
}

// serial asks primary for the zone's SOA serial, and its EXPIRE, over
// UDP, then TCP if the answer is truncated.
func (s *Zone) serial(primary string) (uint32, expireOption, error) {
	m := new(dns.Msg)
	m.SetQuestion(s.origin, dns.TypeSOA)
	askExpire(m)
	c := &dns.Client{Timeout: s.cfg.Timeout}
	s.sign(m, c)
	r, _, err := c.Exchange(m, primary)
	if err == nil && r.Rcode != dns.RcodeSuccess && refusedEDNS(m, rcodeError{r.Rcode}) {
		withoutEDNS(m)
		s.sign(m, c)
		r, _, err = c.Exchange(m, primary)
	}
	if err == nil && r.Truncated {
		c.Net = "tcp"
		r, _, err = c.Exchange(m, primary)
	}
	if err != nil {
		return 0, expireOption{}, err
	}
	if r.Rcode != dns.RcodeSuccess {
		return 0, expireOption{}, fmt.Errorf("SOA query answered %w", rcodeError{r.Rcode})
	}
	for _, rr := range r.Answer {
		if soa, ok := rr.(*dns.SOA); ok && strings.EqualFold(soa.Hdr.Name, s.origin) {
			return soa.Serial, answeredExpire(r), nil
		}
	}
	return 0, expireOption{}, errors.New("SOA query answered without the zone's SOA")
}

// sign has c sign m with the zone's key, if it has one, and check the
// answer's signature.
func (s *Zone) sign(m *dns.Msg, c *dns.Client) {
	if s.cfg.TSIG == nil {
		return
	}
	s.cfg.TSIG.stamp(m)
	c.TsigSecret = map[string]string{s.cfg.TSIG.Name: s.cfg.TSIG.Secret}
}

// stamp adds to m the TSIG record that signing with k fills in.
func (k *TSIG) stamp(m *dns.Msg) { m.SetTsig(k.Name, k.Algorithm, 300, time.Now().Unix()) }

// transfer runs one AXFR or IXFR and returns every record of it, in order
// (xfrin.go), and the primary's EXPIRE. Each message must come within the
// timeout, and the whole within Limits.TransferTime: a primary that sends
// a message every 9 s holds the worker as long as it likes otherwise. A
// transfer past Limits.MaxRecords is cut off there.
func (s *Zone) transfer(primary string, m *dns.Msg) ([]dns.RR, expireOption, error) {
	askExpire(m)
	rrs, expire, err := s.transferOnce(primary, m)
	if refusedEDNS(m, err) {
		withoutEDNS(m)
		return s.transferOnce(primary, m)
	}
	return rrs, expire, err
}

// transferOnce runs the transfer m asks for, as it is: over an idle
// connection to primary where one waits (idleconns.go), else over a new
// one. Where the idle one brings no answer to this query, not even a
// refusal, the transfer runs again over a new connection: the primary may
// have closed it as it was taken. Where it failed otherwise than closed, later
// transfers from that primary open their own connections; and where no
// answer came in the timeout, the transfer is not run again: the worker
// waits a timeout once, as over a new connection.
func (s *Zone) transferOnce(primary string, m *dns.Msg) ([]dns.RR, expireOption, error) {
	if conn := idle.take(primary); conn != nil {
		rrs, expire, answered, err := s.transferOver(conn, primary, m)
		// A message of another query's ID is one left over from the
		// transfer before, where the primary sent past its end.
		if err == nil || (answered && !errors.Is(err, dns.ErrId)) {
			return rrs, expire, err
		}
		if !closedByPeer(err) {
			if idle.freshOnly(primary) {
				s.cfg.Logf("A transfer of %q from %s failed over a connection used before (%v): each transfer from it opens a new connection", s.origin, primary, err)
			}
			if timedOut(err) {
				return nil, expire, err
			}
		}
	}
	conn, err := dns.DialTimeout("tcp", primary, s.cfg.Timeout)
	if err != nil {
		return nil, expireOption{}, err
	}
	rrs, expire, _, err := s.transferOver(conn, primary, m)
	return rrs, expire, err
}

// transferOver runs the transfer m asks for over conn, and keeps conn for
// the next where it ended cleanly; answered reports whether a message of
// the transfer came, signed where it is to be.
func (s *Zone) transferOver(conn *dns.Conn, primary string, m *dns.Msg) (rrs []dns.RR, expire expireOption, answered bool, err error) {
	x, err := startTransfer(conn, m, s.cfg.TSIG, s.cfg.Timeout)
	if err != nil {
		return nil, expireOption{}, false, err
	}
	clean := false
	defer func() {
		if clean {
			x.keep(primary)
		} else {
			x.close()
		}
	}()
	var end time.Time
	if d := s.cfg.Limits.TransferTime; d > 0 {
		end = time.Now().Add(d)
	}
	// A whole zone of MaxRecords records comes with its SOA twice.
	limit := s.cfg.Limits.MaxRecords + 1
	for {
		wait := time.Now().Add(s.cfg.Timeout)
		if !end.IsZero() && end.Before(wait) {
			wait = end
		}
		x.conn.SetReadDeadline(wait)
		page, last, err := x.next()
		answered = x.msgs > 0
		switch {
		case err != nil && !end.IsZero() && !time.Now().Before(end):
			return nil, x.expire, answered, fmt.Errorf("%w: longer than max_transfer_time %s", errTooSlow, s.cfg.Limits.TransferTime)
		case err != nil:
			return nil, x.expire, answered, err
		}
		rrs = append(rrs, page...)
		if limit > 1 && len(rrs) > limit {
			return nil, x.expire, answered, fmt.Errorf("%w: more than max_records %d", errTooLarge, s.cfg.Limits.MaxRecords)
		}
		if last {
			break
		}
	}
	clean = true
	if len(rrs) == 0 {
		return nil, x.expire, answered, errors.New("empty transfer")
	}
	return rrs, x.expire, answered, expiredRemote(x.expire)
}

// sized checks z against Limits.MaxRecords.
func (s *Zone) sized(z *zonestore.Zone) error {
	if max := s.cfg.Limits.MaxRecords; max > 0 && z.Records() > max {
		return fmt.Errorf("%w: %d records, more than max_records %d", errTooLarge, z.Records(), max)
	}
	return nil
}

// errTooLarge is a transfer or a version past Limits.MaxRecords;
// errTooSlow, a transfer past Limits.TransferTime.
var (
	errTooLarge = errors.New("zone too large")
	errTooSlow  = errors.New("transfer too slow")
)

// axfr transfers the whole zone and publishes it over cur.
func (s *Zone) axfr(primary string, cur *zonestore.Zone) error {
	m := new(dns.Msg)
	m.SetAxfr(s.origin)
	rrs, expire, err := s.transfer(primary, m)
	if err == nil {
		err = s.publishWhole(rrs, cur, expire)
	}
	if err != nil {
		err = fmt.Errorf("AXFR: %w", err)
		s.event(AXFR, nil, err)
	}
	return err
}

// publishWhole builds a zone from a whole transfer and publishes it over
// cur, its expire counted as the primary's EXPIRE says.
func (s *Zone) publishWhole(rrs []dns.RR, cur *zonestore.Zone, expire expireOption) error {
	z, err := wholeZone(s.origin, rrs)
	if err != nil {
		return err
	}
	if err := s.verify(z); err != nil {
		return err
	}
	if err := s.publishFresh(cur, z, cur == nil, s.renewal(z, expire, true)); err != nil {
		return err
	}
	s.event(AXFR, z, nil)
	return nil
}

// verify checks z with the configured Verify, if any.
func (s *Zone) verify(z *zonestore.Zone) error {
	if s.cfg.Verify == nil {
		return nil
	}
	return s.cfg.Verify(z)
}

// wholeZone builds a zone from a whole transfer: its SOA first and last.
func wholeZone(origin string, rrs []dns.RR) (*zonestore.Zone, error) {
	if len(rrs) < 2 {
		return nil, errors.New("truncated: a whole zone starts and ends with its SOA")
	}
	first, ok1 := rrs[0].(*dns.SOA)
	last, ok2 := rrs[len(rrs)-1].(*dns.SOA)
	if !ok1 || !ok2 || first.Serial != last.Serial {
		return nil, errors.New("truncated: a whole zone starts and ends with its SOA")
	}
	b, err := zonestore.NewBuilder(origin, "")
	if err != nil {
		return nil, err
	}
	for _, rr := range rrs[:len(rrs)-1] {
		if _, soa := rr.(*dns.SOA); soa && rr != rrs[0] {
			return nil, errors.New("an SOA inside a whole transfer")
		}
		if err := b.Add(rr, 0); err != nil {
			return nil, err
		}
	}
	return b.Build()
}

// ixfr asks for the differences since cur, applies them (applyIXFR) and
// publishes the result as one version.
func (s *Zone) ixfr(primary string, cur *zonestore.Zone) error {
	m := new(dns.Msg)
	m.SetIxfr(s.origin, cur.Serial(), cur.SOA().Ns, cur.SOA().Mbox)
	rrs, expire, err := s.transfer(primary, m)
	if err != nil {
		return err
	}
	z, whole, err := applyIXFR(cur, rrs)
	switch {
	case err != nil:
		return err
	case z == nil:
		s.current(cur, expire)
		return nil
	}
	if err := s.sized(z); err != nil {
		return err
	}
	if err := s.verify(z); err != nil {
		return err
	}
	if err := s.publishFresh(cur, z, false, s.renewal(z, expire, true)); err != nil {
		return err
	}
	if whole {
		s.event(AXFR, z, nil)
	} else {
		s.event(IXFR, z, nil)
	}
	return nil
}

// applyIXFR builds the version an IXFR answer (RFC 1995 section 4) makes
// of cur: every difference applied in order to a copy of it (Zone.Edit),
// each starting from the serial the last one ended at. A primary that
// answers with the whole zone instead is taken as an AXFR (whole). A nil
// zone and no error: cur is current.
func applyIXFR(cur *zonestore.Zone, rrs []dns.RR) (z *zonestore.Zone, whole bool, err error) {
	if len(rrs) == 0 {
		return nil, false, errors.New("empty IXFR answer")
	}
	top, ok := rrs[0].(*dns.SOA)
	if !ok {
		return nil, false, errors.New("IXFR answer does not start with an SOA")
	}
	if len(rrs) == 1 {
		if !zonestore.SerialNewer(top.Serial, cur.Serial()) {
			return nil, false, nil
		}
		return nil, false, errors.New("IXFR answer is the SOA alone, and newer")
	}
	if second, ok := rrs[1].(*dns.SOA); !ok || second.Serial != cur.Serial() {
		z, err := wholeZone(cur.Origin(), rrs) // the whole zone: an AXFR in IXFR's clothes
		return z, true, err
	}
	if last, ok := rrs[len(rrs)-1].(*dns.SOA); !ok || last.Serial != top.Serial || len(rrs) < 3 {
		return nil, false, errors.New("IXFR truncated: it does not end with the new SOA")
	}
	b := cur.Edit()
	at := cur.Serial()
	deleting := false
	for _, rr := range rrs[1 : len(rrs)-1] {
		if soa, ok := rr.(*dns.SOA); ok {
			deleting = !deleting
			if deleting { // a difference starts: from the serial the last one reached
				if soa.Serial != at {
					return nil, false, fmt.Errorf("IXFR out of order: a difference from serial %d, the zone is at %d", soa.Serial, at)
				}
				if err := b.Delete(rr); err != nil {
					return nil, false, fmt.Errorf("IXFR does not apply: %w", err)
				}
				continue
			}
			at = soa.Serial
			if err := b.Add(rr, 0); err != nil {
				return nil, false, err
			}
			continue
		}
		if deleting {
			if err := b.Delete(rr); err != nil {
				return nil, false, fmt.Errorf("IXFR does not apply: %w", err)
			}
		} else if err := b.Add(rr, 0); err != nil {
			return nil, false, err
		}
	}
	if deleting || at != top.Serial {
		return nil, false, errors.New("IXFR truncated: its last difference is incomplete")
	}
	z, err = b.Build()
	if err != nil {
		return nil, false, fmt.Errorf("IXFR result is not a valid zone: %w", err)
	}
	return z, false, nil
}
