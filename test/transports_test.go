package test

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/binary"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/miekg/dns"
	"github.com/quic-go/quic-go"

	"github.com/ontimedns/ontime/internal/freeport"
)

// TestEncryptedTransportsAnswerAsTCP: the chain (codel, fastpack,
// zonestore, prometheus) behind CoreDNS's DNS over TLS (RFC 7858), HTTPS
// (RFC 8484) and QUIC (RFC 9250) servers answers every question as it
// answers it over plain TCP: codel takes over only the plain UDP and TCP
// listeners and passes the others' queries through; fastpack packs the TLS
// stream's answers and leaves HTTPS's and QUIC's to the standard encoder
// (its README).
func TestEncryptedTransportsAnswerAsTCP(t *testing.T) {
	dir := t.TempDir()
	cert, key := selfSigned(t, dir)
	plain, dot, doh, doq := freeport.Get(t), freeport.Get(t), freeport.Get(t), freeport.Get(t)
	prom := freeport.Get(t)
	root := repoRoot(t)
	var corefile bytes.Buffer
	for _, b := range []struct {
		scheme string
		port   int
	}{{"dns", plain}, {"tls", dot}, {"https", doh}, {"quic", doq}} {
		fmt.Fprintf(&corefile, "%s://.:%d {\n    bind 127.0.0.1\n", b.scheme, b.port)
		if b.scheme != "dns" {
			fmt.Fprintf(&corefile, "    tls %s %s\n", cert, key)
		}
		fmt.Fprintf(&corefile, "    prometheus 127.0.0.1:%d\n    codel\n    fastpack\n", prom)
		fmt.Fprintf(&corefile, "    zonestore %s/testdata/zones/example.org.zone example.org\n", root)
		fmt.Fprintf(&corefile, "    zonestore %s/testdata/zones/signed.test.zone signed.test\n}\n", root)
	}
	s := startCorefile(t, corefile.String(), plain, "example.org", "signed.test")
	anyCert := &tls.Config{InsecureSkipVerify: true}

	asked := map[string]func(m *dns.Msg) (*dns.Msg, error){
		"TLS": func(m *dns.Msg) (*dns.Msg, error) {
			c := &dns.Client{Net: "tcp-tls", TLSConfig: anyCert, Timeout: 5 * time.Second}
			r, _, err := c.Exchange(m, fmt.Sprintf("127.0.0.1:%d", dot))
			return r, err
		},
		"HTTPS": func(m *dns.Msg) (*dns.Msg, error) {
			q, err := m.Pack()
			if err != nil {
				return nil, err
			}
			hc := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: anyCert}}
			resp, err := hc.Post(fmt.Sprintf("https://127.0.0.1:%d/dns-query", doh), "application/dns-message", bytes.NewReader(q))
			if err != nil {
				return nil, err
			}
			defer resp.Body.Close()
			b, err := io.ReadAll(resp.Body)
			if err != nil || resp.StatusCode != http.StatusOK {
				return nil, fmt.Errorf("%s: %v", resp.Status, err)
			}
			r := new(dns.Msg)
			return r, r.Unpack(b)
		},
		"QUIC": func(m *dns.Msg) (*dns.Msg, error) { return askQUIC(fmt.Sprintf("127.0.0.1:%d", doq), m) },
	}
	questions := []struct {
		name  string
		qtype uint16
		do    bool
	}{
		{"example.org.", dns.TypeSOA, false}, {"www.example.org.", dns.TypeA, false},
		{"ftp.example.org.", dns.TypeA, false}, {"nx.example.org.", dns.TypeAAAA, false},
		{"example.org.", dns.TypeMX, false}, {"signed.test.", dns.TypeDNSKEY, true},
		{"nx.signed.test.", dns.TypeA, true}, {"www.example.com.", dns.TypeA, false},
	}
	for _, q := range questions {
		m := new(dns.Msg)
		m.SetQuestion(q.name, q.qtype)
		m.Id = 0 // as RFC 8484 and RFC 9250 ask
		if q.do {
			m.SetEdns0(1232, true)
		}
		want, err := exchange(t, s.addr, m, true)
		if err != nil {
			t.Fatal(err)
		}
		for transport, ask := range asked {
			got, err := ask(m.Copy())
			if err != nil {
				t.Errorf("%s %s over %s: %v", q.name, dns.TypeToString[q.qtype], transport, err)
				continue
			}
			if got.String() != want.String() {
				t.Errorf("%s %s over %s:\n%v\nover TCP:\n%v", q.name, dns.TypeToString[q.qtype], transport, got, want)
			}
		}
	}
}

// askQUIC asks m over DNS over QUIC (RFC 9250): a stream of its own, the
// message with its length before it, as over TCP.
func askQUIC(addr string, m *dns.Msg) (*dns.Msg, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := quic.DialAddr(ctx, addr, &tls.Config{InsecureSkipVerify: true, NextProtos: []string{"doq"}}, nil)
	if err != nil {
		return nil, err
	}
	defer conn.CloseWithError(0, "")
	st, err := conn.OpenStreamSync(ctx)
	if err != nil {
		return nil, err
	}
	q, err := m.Pack()
	if err != nil {
		return nil, err
	}
	if _, err := st.Write(binary.BigEndian.AppendUint16(nil, uint16(len(q)))); err != nil {
		return nil, err
	}
	if _, err := st.Write(q); err != nil {
		return nil, err
	}
	st.Close() // the query's end (STREAM FIN)
	b, err := io.ReadAll(st)
	if err != nil {
		return nil, err
	}
	if len(b) < 2 || int(binary.BigEndian.Uint16(b)) != len(b)-2 {
		return nil, fmt.Errorf("a DoQ answer of %d octets", len(b))
	}
	r := new(dns.Msg)
	return r, r.Unpack(b[2:])
}

// selfSigned writes a certificate for 127.0.0.1 and its key into dir.
func selfSigned(t testing.TB, dir string) (cert, key string) {
	t.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "ontime test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &k.PublicKey, k)
	if err != nil {
		t.Fatal(err)
	}
	kder, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		t.Fatal(err)
	}
	cert, key = filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	os.WriteFile(cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644)
	os.WriteFile(key, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kder}), 0o600)
	return cert, key
}
