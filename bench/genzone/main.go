// Command genzone writes the benchmark zone and a dnsperf query file.
//
//	go run ./bench/genzone -hosts 50000 -zone bench/out/db.bench -queries bench/out/queries.txt
//
// With -slow DIR it also writes the overload benchmark's costly part: a
// zone slow.example (DIR/db.slow.example) of one wildcard, signed online by
// the dnssec plugin with an RSA key (DIR/Kslow.example.*), and a second
// query file (-slow-queries) where one query in -slow-every, at random
// places, asks a new name under it with the DO bit, so that each one costs
// a fresh signature.
package main

import (
	"bufio"
	"crypto/rsa"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"

	"github.com/miekg/dns"

	"github.com/ontimedns/ontime/bench/workload"
)

func main() {
	hosts := flag.Int("hosts", 50000, "hosts in the zone")
	zone := flag.String("zone", "bench/out/db.bench", "zone file to write")
	queries := flag.String("queries", "bench/out/queries.txt", "dnsperf query file to write")
	count := flag.Int("count", 200000, "queries in the file")
	slow := flag.String("slow", "", "directory for the slow.example zone and its key (none if empty)")
	slowQueries := flag.String("slow-queries", "bench/out/queries-slow.txt", "query file with the costly queries mixed in")
	slowEvery := flag.Int("slow-every", 20, "one query in this many, at random places, is costly (20: 5%)")
	bits := flag.Int("slow-bits", 2048, "RSA key size: the cost of one costly query")
	flag.Parse()
	if *slow != "" {
		if err := writeSlow(*slow, *bits); err != nil {
			log.Fatal(err)
		}
		if err := writeQueries(*slowQueries, *hosts, *count, *slowEvery); err != nil {
			log.Fatal(err)
		}
	}
	if err := os.WriteFile(*zone, []byte(workload.Zone(*hosts)), 0o644); err != nil {
		log.Fatal(err)
	}
	if err := writeQueries(*queries, *hosts, *count, 0); err != nil {
		log.Fatal(err)
	}
}

// writeQueries writes the mix; with every > 0, one query in every, at
// random places (the same in every file: a fixed seed), is a new name under
// slow.example with the DO bit (loadgen's _rand_ label). Not at regular
// places: a costly query every 20th, sent at a fixed rate, arrives at a
// fixed period, and shedding by age then drops the cheap queries queued
// behind each costly one far more often than the costly ones themselves (a
// simulation and a run served 8.7% and 7.8% costly queries, not 5%, and
// answered a third fewer queries: bench/README.md). Traffic has no such
// period.
func writeQueries(path string, hosts, count, every int) error {
	costly := rand.New(rand.NewPCG(20, 26))
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	for _, q := range workload.Queries(hosts, count) {
		if every > 0 && costly.IntN(every) == 0 {
			fmt.Fprintln(w, "_rand_.slow.example. A do")
			continue
		}
		fmt.Fprintf(w, "%s %s\n", q.Name, q.Type)
	}
	return w.Flush()
}

// writeSlow writes slow.example's zone and an RSA signing key for the
// dnssec plugin, in the files dnssec-keygen would write.
func writeSlow(dir string, bits int) error {
	zone := "$ORIGIN slow.example.\n$TTL 300\n@ SOA ns hostmaster 1 7200 3600 1209600 300\n@ NS ns\nns A 192.0.2.53\n* A 192.0.2.1\n"
	if err := os.WriteFile(filepath.Join(dir, "db.slow.example"), []byte(zone), 0o644); err != nil {
		return err
	}
	k := &dns.DNSKEY{Hdr: dns.RR_Header{Name: "slow.example.", Rrtype: dns.TypeDNSKEY, Class: dns.ClassINET, Ttl: 3600},
		Flags: 257, Protocol: 3, Algorithm: dns.RSASHA256}
	priv, err := k.Generate(bits)
	if err != nil {
		return err
	}
	base := filepath.Join(dir, fmt.Sprintf("Kslow.example.+%03d+%05d", k.Algorithm, k.KeyTag()))
	if err := os.WriteFile(base+".key", []byte(k.String()+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(base+".private", []byte(k.PrivateKeyString(priv.(*rsa.PrivateKey))), 0o600)
}
