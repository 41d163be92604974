// Command loadgen is an open-loop DNS load generator: it sends queries at a
// fixed offered rate whatever the server answers, and reports how many were
// answered, answered on time, answered with an error, or never answered,
// with latency percentiles from a histogram. A closed-loop tool (dnsperf)
// slows down when the server does, and so never shows what overload does
// to the queries that keep arriving; this one does. An answer's latency
// runs from its query's send to the kernel's stamp of the answer's arrival
// (SO_TIMESTAMPNS), so the time this tool takes to read it is not counted.
//
//	go run ./bench/loadgen -server 127.0.0.1:15353 -queries bench/out/queries.txt -rate 50000 -duration 10s
//
// Bounded: it stops sending after -duration or -max queries, waits -wait
// for the last answers, and exits. It sends to the address it is given and
// nowhere else; use a loopback address.
//
// Query file: one query a line, "NAME TYPE [do]" (dnsperf's format, plus an
// optional DO bit). A label _rand_ in NAME is replaced, at every send, by
// six hex digits of a counter, so that each such query asks a new name.
package main

import (
	"bufio"
	"encoding/binary"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/rxstamp"
)

// query is one packed query of the file.
type query struct {
	wire []byte
	rand int  // offset of the _rand_ label's six octets, or -1
	caps bool // each send's name in a case of its own (-caps)
}

// packet appends q to dst as the n-th query sent, its _rand_ label (if
// any) replaced by six hex digits of n, its name's letters in a case drawn
// for n where q.caps, its ID id.
func (q query) packet(dst []byte, n int, id uint16) []byte {
	b := append(dst, q.wire...)
	if q.rand >= 0 {
		const hex = "0123456789abcdef"
		for j := range 6 {
			b[len(dst)+q.rand+j] = hex[(n>>(4*(5-j)))&0xF]
		}
	}
	if q.caps {
		mixCase(b[len(dst):], uint64(n))
	}
	binary.BigEndian.PutUint16(b[len(dst):], id)
	return b
}

// mixCase sets the case of each letter of the question's name in m, a
// query, by a bit drawn from n: the 0x20 encoding some resolvers send
// (each query's name in a case of its own, which its answer must repeat).
func mixCase(m []byte, n uint64) {
	x := n*0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019
	for i := 12; i < len(m) && m[i] != 0 && m[i] < 64; i += 1 + int(m[i]) {
		for j := i + 1; j <= i+int(m[i]) && j < len(m); j++ {
			if c := m[j] | 0x20; 'a' <= c && c <= 'z' {
				x ^= x << 13
				x ^= x >> 7
				x ^= x << 17
				m[j] = c &^ (byte(x&1) << 5)
			}
		}
	}
}

// answerKind reads an answer's rcode, and whether it is NODATA: NOERROR
// with no answer record.
func answerKind(b []byte) (rcode int, nodata bool) {
	rcode = int(b[3] & 0xF)
	return rcode, rcode == dns.RcodeSuccess && b[6] == 0 && b[7] == 0
}

// load reads the query file. With bufsize, every query carries an OPT
// record advertising it; with cookie, every query carries one with a
// COOKIE option (RFC 7873): a client cookie, the same for every query, as
// a resolver such as BIND sends to a server it has not yet had a server
// cookie from. With caps, each send's name is in a case of its own.
func load(path string, bufsize uint16, cookie, caps bool) ([]query, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var qs []query
	sc := bufio.NewScanner(f)
	for line := 1; sc.Scan(); line++ {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || strings.HasPrefix(fields[0], "#") {
			continue
		}
		if len(fields) < 2 {
			return nil, fmt.Errorf("%s line %d: want NAME TYPE [do]", path, line)
		}
		qtype, ok := dns.StringToType[strings.ToUpper(fields[1])]
		if !ok {
			return nil, fmt.Errorf("%s line %d: unknown type %q", path, line, fields[1])
		}
		m := new(dns.Msg)
		m.SetQuestion(dns.Fqdn(fields[0]), qtype)
		m.RecursionDesired = false
		do := len(fields) > 2 && strings.EqualFold(fields[2], "do")
		if do || bufsize > 0 || cookie {
			m.SetEdns0(max(bufsize, 1232), do)
		}
		if cookie {
			o := m.IsEdns0()
			o.Option = append(o.Option, &dns.EDNS0_COOKIE{Code: dns.EDNS0COOKIE, Cookie: "0f1e2d3c4b5a6978"})
		}
		wire, err := m.Pack()
		if err != nil {
			return nil, fmt.Errorf("%s line %d: %v", path, line, err)
		}
		q := query{wire: wire, rand: -1, caps: caps}
		if i := strings.Index(string(wire), "\x06_rand_"); i >= 0 {
			q.rand = i + 1
		}
		qs = append(qs, q)
	}
	if len(qs) == 0 {
		return nil, fmt.Errorf("%s: no queries", path)
	}
	return qs, sc.Err()
}

// conn is one socket: 65536 IDs, each used once, so that an answer is
// matched to its query without doubt.
type conn struct {
	c    *net.UDPConn
	sent [65536]atomic.Int64 // send time (ns since start) of ID i; 0 when answered or unused
}

// arrival is when an answer reached this host, in nanoseconds since start:
// the kernel's stamp, so that an answer's latency does not include the
// time it waited for this process, busy sending on its own core, to read
// it. A stamp later than now (the wall clock was stepped) is not believed.
func arrival(start time.Time, oob []byte) int64 {
	now := time.Since(start).Nanoseconds()
	if ts, ok := rxstamp.Received(oob); ok {
		if at := ts - start.UnixNano(); at > 0 && at <= now {
			return at
		}
	}
	return now
}

type result struct {
	Offered     float64 `json:"offered_qps"`
	Seconds     float64 `json:"seconds"`
	Sent        int64   `json:"sent"`
	Answered    int64   `json:"answered"`
	OnTime      int64   `json:"on_time"`
	ServFail    int64   `json:"servfail"`
	Refused     int64   `json:"refused"`
	NXDomain    int64   `json:"nxdomain"`
	NoData      int64   `json:"nodata"` // NOERROR with no answer record
	Unanswered  int64   `json:"unanswered"`
	P50         float64 `json:"p50_ms"`
	P90         float64 `json:"p90_ms"`
	P99         float64 `json:"p99_ms"`
	P999        float64 `json:"p999_ms"`
	OnTimeRate  float64 `json:"on_time_rate"`
	GoodputQPS  float64 `json:"on_time_qps"`
	AnsweredQPS float64 `json:"answered_qps"`
	DeadlineMs  float64 `json:"deadline_ms"`
}

func main() {
	server := flag.String("server", "127.0.0.1:15353", "server address (loopback)")
	file := flag.String("queries", "bench/out/queries.txt", "query file: NAME TYPE [do] a line")
	rate := flag.Float64("rate", 10000, "offered queries per second")
	duration := flag.Duration("duration", 10*time.Second, "how long to send")
	maxQ := flag.Int("max", 4_000_000, "queries at most")
	wait := flag.Duration("wait", time.Second, "how long to wait for answers after the last query")
	deadline := flag.Duration("deadline", 100*time.Millisecond, "an answer later than this is not on time")
	bufsize := flag.Uint("bufsize", 0, "EDNS UDP size to advertise on every query (0: only on DO queries)")
	cookie := flag.Bool("cookie", false, "a COOKIE option (a client cookie) on every query, as resolvers such as BIND send")
	caps := flag.Bool("caps", false, "each query's name in a case of its own (0x20), as some resolvers send")
	asJSON := flag.Bool("json", false, "print the result as one JSON line")
	inflight := flag.Int("inflight", 0, "closed loop instead: keep this many queries outstanding (to measure capacity)")
	warmup := flag.Duration("warmup", 0, "leave the answers to queries sent in this first stretch out of the latency percentiles (steady state)")
	batch := flag.Int("batch", 0, "with -inflight: send and read up to this many queries a system call (batch.go)")
	sockets := flag.Int("sockets", 4, "with -batch: sockets (source ports) the window is shared over")
	flag.Parse()

	qs, err := load(*file, uint16(*bufsize), *cookie, *caps)
	if err != nil {
		log.Fatal(err)
	}
	if *batch > 0 && *inflight > 0 {
		raddr, err := net.ResolveUDPAddr("udp", *server)
		if err != nil {
			log.Fatal(err)
		}
		var hist histogram
		r, err := runBatched(raddr, qs, *inflight, *batch, *sockets, *maxQ, *duration, *wait, *deadline, &hist)
		if err != nil {
			log.Fatal(err)
		}
		report(r, &hist, *deadline, *asJSON)
		return
	}
	total := min(int(*rate*duration.Seconds()), *maxQ)
	var tokens chan struct{}
	if *inflight > 0 {
		total = *maxQ
		tokens = make(chan struct{}, *inflight)
		for range *inflight {
			tokens <- struct{}{}
		}
	}
	conns := make([]*conn, (total+65535)/65536)
	raddr, err := net.ResolveUDPAddr("udp", *server)
	if err != nil {
		log.Fatal(err)
	}
	for i := range conns {
		c, err := net.DialUDP("udp", nil, raddr)
		if err != nil {
			log.Fatal(err)
		}
		c.SetReadBuffer(4 << 20)
		if raw, err := c.SyscallConn(); err == nil {
			rxstamp.Enable(raw)
		}
		conns[i] = &conn{c: c}
	}

	var (
		hist                                histogram
		answered, onTime, servfail, refused atomic.Int64
		nxdomain, nodata                    atomic.Int64
		wg                                  sync.WaitGroup
	)
	start := time.Now()
	dl := deadline.Nanoseconds()
	warm := warmup.Nanoseconds()
	for _, c := range conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			buf := make([]byte, 65535)
			oob := make([]byte, 128)
			for {
				n, oobn, _, _, err := c.c.ReadMsgUDP(buf, oob)
				if err != nil {
					if ne, ok := err.(net.Error); ok && ne.Timeout() {
						return
					}
					continue // ICMP errors from a server that is starting or gone
				}
				if n < 12 || buf[2]&0x80 == 0 {
					continue
				}
				now := arrival(start, oob[:oobn])
				id := binary.BigEndian.Uint16(buf)
				t := c.sent[id].Swap(0)
				if t == 0 {
					continue // a duplicate, or not ours
				}
				if tokens != nil {
					select {
					case tokens <- struct{}{}:
					default: // the loop has stopped sending
					}
				}
				lat := now - t
				if t >= warm {
					hist.add(lat)
				}
				answered.Add(1)
				if lat <= dl {
					onTime.Add(1)
				}
				switch rc, empty := answerKind(buf); rc {
				case dns.RcodeServerFailure:
					servfail.Add(1)
				case dns.RcodeRefused:
					refused.Add(1)
				case dns.RcodeNameError:
					nxdomain.Add(1)
				case dns.RcodeSuccess:
					if empty {
						nodata.Add(1)
					}
				}
			}
		}()
	}

	// Closed loop: a query unanswered after -wait gives its place back (a
	// server that drops queries must not shrink the loop).
	var sentNow atomic.Int64
	stopJanitor := make(chan struct{})
	if tokens != nil {
		go func() {
			next := 0 // the oldest query not yet given up on
			tick := time.NewTicker(10 * time.Millisecond)
			defer tick.Stop()
			for {
				select {
				case <-stopJanitor:
					return
				case <-tick.C:
				}
				old := time.Since(start).Nanoseconds() - wait.Nanoseconds()
				for n := int(sentNow.Load()); next < n; next++ {
					slot := &conns[next/65536].sent[uint16(next)]
					t := slot.Load()
					if t > old {
						break
					}
					if t != 0 && slot.CompareAndSwap(t, 0) {
						select {
						case tokens <- struct{}{}:
						default:
						}
					}
				}
			}
		}()
	}

	// Open loop: query i goes out at i/rate seconds, answered or not.
	// Closed loop: a query goes out when an answer comes back, or when a
	// query is given up on (above), or after 50 ms of neither.
	pkt := make([]byte, 0, 512)
	sent := 0
	lost := time.NewTimer(time.Hour)
	for sent < total && time.Since(start) < *duration {
		due := min(int(time.Since(start).Seconds()**rate), total)
		if tokens != nil {
			lost.Reset(50 * time.Millisecond)
			select {
			case <-tokens:
			case <-lost.C:
			}
			due = sent + 1
		}
		for ; sent < due; sent++ {
			c := conns[sent/65536]
			id := uint16(sent)
			pkt = qs[sent%len(qs)].packet(pkt[:0], sent, id)
			c.sent[id].Store(max(time.Since(start).Nanoseconds(), 1))
			c.c.Write(pkt)
			sentNow.Store(int64(sent + 1))
		}
		if tokens == nil {
			time.Sleep(50 * time.Microsecond)
		}
	}
	sendTime := time.Since(start)
	close(stopJanitor)
	for _, c := range conns {
		c.c.SetReadDeadline(time.Now().Add(*wait))
	}
	wg.Wait()

	if tokens != nil {
		*rate = float64(sent) / sendTime.Seconds()
	}
	r := result{
		Offered: *rate, Seconds: sendTime.Seconds(), Sent: int64(sent),
		Answered: answered.Load(), OnTime: onTime.Load(), ServFail: servfail.Load(), Refused: refused.Load(),
		NXDomain: nxdomain.Load(), NoData: nodata.Load(),
	}
	r.Unanswered = r.Sent - r.Answered
	report(r, &hist, *deadline, *asJSON)
}

// report completes r from hist and prints it.
func report(r result, hist *histogram, deadline time.Duration, asJSON bool) {
	r.DeadlineMs = float64(deadline.Nanoseconds()) / 1e6
	r.P50, r.P90, r.P99, r.P999 = hist.quantile(0.5), hist.quantile(0.9), hist.quantile(0.99), hist.quantile(0.999)
	// Error answers (a server's way of shedding, when told to answer
	// dropped queries) are not on time: they answer nothing.
	good := r.OnTime - r.ServFail - r.Refused
	r.OnTimeRate = float64(good) / float64(r.Sent)
	r.GoodputQPS = float64(good) / r.Seconds
	r.AnsweredQPS = float64(r.Answered) / r.Seconds
	if asJSON {
		json.NewEncoder(os.Stdout).Encode(r)
		return
	}
	fmt.Printf("offered %.0f q/s for %.1f s: sent %d, answered %d (%.0f q/s), on time (<= %v) %d (%.1f%%, %.0f q/s)\n",
		r.Offered, r.Seconds, r.Sent, r.Answered, r.AnsweredQPS, deadline, good, 100*r.OnTimeRate, r.GoodputQPS)
	fmt.Printf("unanswered %d, SERVFAIL %d, REFUSED %d, NXDOMAIN %d, NODATA %d\n", r.Unanswered, r.ServFail, r.Refused, r.NXDomain, r.NoData)
	fmt.Printf("latency of answers: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms, p99.9 %.3f ms\n", r.P50, r.P90, r.P99, r.P999)
}
