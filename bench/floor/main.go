// Command floor is the floor under every server in the load test: one
// goroutine that reads queries from a UDP socket and sends each straight
// back as an answer (the QR bit set, nothing looked up). With -batch 1 it
// makes one system call per packet each way; with more, recvmmsg and
// sendmmsg carry that many at once (golang.org/x/net). No DNS server can
// answer faster over the same socket calls; bench/load.sh measures it
// beside the real ones.
//
//	go run ./bench/floor -addr 127.0.0.1:15353 -batch 32
package main

import (
	"flag"
	"log"
	"net"
	"net/netip"

	"golang.org/x/net/ipv4"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:15353", "UDP address to answer on (loopback)")
	batch := flag.Int("batch", 1, "datagrams per system call")
	flag.Parse()
	conn, err := net.ListenUDP("udp", net.UDPAddrFromAddrPort(netip.MustParseAddrPort(*addr)))
	if err != nil {
		log.Fatal(err)
	}
	if *batch <= 1 {
		single(conn)
	}
	batched(ipv4.NewPacketConn(conn), *batch)
}

func single(conn *net.UDPConn) {
	buf := make([]byte, 4096)
	for {
		n, from, err := conn.ReadFromUDPAddrPort(buf)
		if err != nil {
			log.Fatal(err)
		}
		if n >= 12 {
			buf[2] |= 0x80 // QR: an answer, with the question echoed
			conn.WriteToUDPAddrPort(buf[:n], from)
		}
	}
}

func batched(pc *ipv4.PacketConn, size int) {
	in := make([]ipv4.Message, size)
	out := make([]ipv4.Message, 0, size)
	for i := range in {
		in[i].Buffers = [][]byte{make([]byte, 4096)}
	}
	for {
		n, err := pc.ReadBatch(in, 0)
		if err != nil {
			log.Fatal(err)
		}
		out = out[:0]
		for _, m := range in[:n] {
			if m.N >= 12 {
				b := m.Buffers[0][:m.N]
				b[2] |= 0x80
				out = append(out, ipv4.Message{Buffers: [][]byte{b}, Addr: m.Addr})
			}
		}
		for len(out) > 0 {
			k, err := pc.WriteBatch(out, 0)
			if err != nil {
				break
			}
			out = out[k:]
		}
	}
}
