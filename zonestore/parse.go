package zonestore

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/internal/yield"
)

// Parse reads a zone in RFC 1035 master file format and builds it. file names
// the source in errors, and $INCLUDE paths are relative to its directory.
func Parse(r io.Reader, origin, file string) (*Zone, error) {
	b, err := NewBuilder(origin, file)
	if err != nil {
		return nil, err
	}
	err = readRecords(r, b.origin, file, nil, func(rr dns.RR, line int) error { return b.Add(rr, line) }) // Add paces
	if err != nil {
		return nil, err
	}
	return b.Build()
}

// readRecords parses a master file, handing each record to f with the
// line it ended on, and ticking pace for each.
func readRecords(r io.Reader, origin, file string, pace *yield.Pacer, f func(dns.RR, int) error) error {
	lr := &lineReader{r: r}
	zp := dns.NewZoneParser(lr, origin, file)
	zp.SetIncludeAllowed(true)
	if file != "" {
		zp.SetIncludeFS(os.DirFS(filepath.Dir(file)))
	}
	for rr, ok := zp.Next(); ok; rr, ok = zp.Next() {
		pace.Tick()
		// The lexer has just read the newline that ends the record, so the
		// lines read so far are the record's last line.
		if err := f(rr, lr.lines); err != nil {
			return err
		}
	}
	if err := zp.Err(); err != nil {
		return parseError(origin, file, err)
	}
	return nil
}

// parseError turns the zone parser's error into an Error with its line.
// miekg/dns keeps the line unexported, in the message "... at line: L:C".
func parseError(origin, file string, err error) *Error {
	msg := strings.TrimPrefix(err.Error(), file+": ")
	e := &Error{Origin: origin, File: file, Reason: msg}
	if m := lineInMessage.FindStringSubmatch(msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
		e.Reason = strings.TrimSuffix(msg, m[0])
	}
	return e
}

var lineInMessage = regexp.MustCompile(` at line: (\d+):\d+$`)

// ParseFile reads and parses a zone file. A large one keeps its text for
// the next Reparse.
func ParseFile(path, origin string) (*Zone, error) {
	text, err := os.ReadFile(path)
	if err != nil {
		return nil, &Error{Origin: dns.CanonicalName(origin), File: path, Reason: err.Error()}
	}
	z, err := Parse(bytes.NewReader(text), origin, path)
	if err != nil {
		return nil, err
	}
	var pace yield.Pacer
	defer pace.Close()
	z.keepText(text, &pace)
	return z, nil
}

// lineReader counts the newlines the zone lexer has consumed. The lexer uses
// an io.ByteReader as it is, without buffering ahead, so the count is exact.
type lineReader struct {
	r     io.Reader
	buf   [4096]byte
	n, i  int
	lines int
	err   error
}

func (l *lineReader) ReadByte() (byte, error) {
	if l.i == l.n {
		if l.err != nil {
			return 0, l.err
		}
		l.n, l.err = l.r.Read(l.buf[:])
		l.i = 0
		if l.n == 0 {
			if l.err == nil {
				l.err = io.ErrNoProgress
			}
			return 0, l.err
		}
	}
	c := l.buf[l.i]
	l.i++
	if c == '\n' {
		l.lines++
	}
	return c, nil
}

func (l *lineReader) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) {
		c, err := l.ReadByte()
		if err != nil {
			if n > 0 {
				return n, nil
			}
			return 0, err
		}
		p[n] = c
		n++
	}
	return n, nil
}
