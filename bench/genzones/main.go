// Command genzones writes many small zones into one directory, as a
// hosting provider's name servers hold them: N files db.zI.test of ten
// records each, a Knot DNS configuration listing them, and a query file
// spread over all of them (an address, a mail exchanger, a name that does
// not exist).
//
//	go run ./bench/genzones -zones 100000 -dir bench/out/zones
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
)

func main() {
	n := flag.Int("zones", 100000, "zones to write")
	dir := flag.String("dir", "bench/out/zones", "directory for the zone files (emptied first)")
	knot := flag.String("knot", "bench/out/zones.knot.conf", "Knot configuration fragment to write: the zone list")
	queries := flag.String("queries", "bench/out/zones.queries.txt", "query file to write")
	count := flag.Int("count", 300000, "queries in the query file")
	flag.Parse()

	os.RemoveAll(*dir)
	if err := os.MkdirAll(*dir, 0o755); err != nil {
		log.Fatal(err)
	}
	kf, err := os.Create(*knot)
	if err != nil {
		log.Fatal(err)
	}
	kw := bufio.NewWriter(kf)
	kw.WriteString("zone:\n")
	for i := range *n {
		origin := fmt.Sprintf("z%d.test", i)
		path := filepath.Join(*dir, "db."+origin)
		text := fmt.Sprintf(`$ORIGIN %s.
$TTL 3600
@ SOA ns1 hostmaster 1 7200 3600 1209600 300
@ NS ns1
@ NS ns2
ns1 A 192.0.2.53
ns2 A 192.0.2.54
@ MX 10 mail
mail A 10.%d.%d.1
www A 10.%d.%d.2
www AAAA 2001:db8::%x:%x
ftp CNAME www
`, origin, (i>>8)&255, i&255, (i>>8)&255, i&255, i>>16, i&0xffff)
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			log.Fatal(err)
		}
		abs, _ := filepath.Abs(path)
		fmt.Fprintf(kw, "  - domain: %s\n    file: %s\n", origin, abs)
	}
	if err := kw.Flush(); err != nil {
		log.Fatal(err)
	}
	kf.Close()

	qf, err := os.Create(*queries)
	if err != nil {
		log.Fatal(err)
	}
	qw := bufio.NewWriter(qf)
	r := rand.New(rand.NewPCG(1, 2))
	for range *count {
		z := r.IntN(*n)
		switch r.IntN(4) {
		case 0, 1:
			fmt.Fprintf(qw, "www.z%d.test. A\n", z)
		case 2:
			fmt.Fprintf(qw, "z%d.test. MX\n", z)
		default:
			fmt.Fprintf(qw, "nx%d.z%d.test. A\n", r.IntN(1000), z)
		}
	}
	if err := qw.Flush(); err != nil {
		log.Fatal(err)
	}
	qf.Close()
}
