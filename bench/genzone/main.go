// Command genzone writes the benchmark zone and a dnsperf query file.
//
//	go run ./bench/genzone -hosts 50000 -zone bench/out/db.bench -queries bench/out/queries.txt
package main

import (
	"bufio"
	"flag"
	"fmt"
	"log"
	"os"

	"github.com/ontimedns/ontime/bench/workload"
)

func main() {
	hosts := flag.Int("hosts", 50000, "hosts in the zone")
	zone := flag.String("zone", "bench/out/db.bench", "zone file to write")
	queries := flag.String("queries", "bench/out/queries.txt", "dnsperf query file to write")
	count := flag.Int("count", 200000, "queries in the file")
	flag.Parse()
	if err := os.WriteFile(*zone, []byte(workload.Zone(*hosts)), 0o644); err != nil {
		log.Fatal(err)
	}
	f, err := os.Create(*queries)
	if err != nil {
		log.Fatal(err)
	}
	w := bufio.NewWriter(f)
	for _, q := range workload.Queries(*hosts, *count) {
		fmt.Fprintf(w, "%s %s\n", q.Name, q.Type)
	}
	if err := w.Flush(); err != nil {
		log.Fatal(err)
	}
	f.Close()
}
