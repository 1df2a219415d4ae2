package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"runtime"
	"sort"
	"strconv"
	"testing"
	"time"
)

// The costs of TLS termination, each beside the direct figure (issue #20
// budgets: a download through the terminating proxy at ≥ 70% of direct
// TLS; time to first byte of a new terminated connection, leaf cached,
// p50 under 2 ms more than direct; an idle terminated tunnel under 64 KiB).
// Compare within one run: go test ./proxy -run '^$' -bench Terminate.

// bigUpstream is an HTTPS origin serving size bytes at /big and one byte
// at /one.
func bigUpstream(b *testing.B, size int) (port string, roots *x509.CertPool) {
	chunk := make([]byte, 256<<10)
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/one" {
			w.Write([]byte{'x'})
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(size))
		for sent := 0; sent < size; sent += len(chunk) {
			if _, err := w.Write(chunk[:min(len(chunk), size-sent)]); err != nil {
				return
			}
		}
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	b.Cleanup(srv.Close)
	roots = x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return port, roots
}

// benchProxy is a terminating proxy for example.com → the origin.
func benchProxy(b *testing.B, roots *x509.CertPool) (httpAddr string, ca *x509.CertPool) {
	c, err := NewCA()
	if err != nil {
		b.Fatal(err)
	}
	s := New(policy(b, []string{"example.com"}, nil, nil))
	s.Resolve = fakeDNS(map[string]string{"example.com": "127.0.0.1"})
	// The origin is on loopback, which the resolved-address check
	// refuses unless allowed by address.
	s.SetPolicy(policy(b, []string{"example.com", "127.0.0.1"}, nil, nil))
	s.SetInspection(&Inspection{CA: c, RootCAs: roots})
	httpAddr, _ = start(b, s)
	ca = x509.NewCertPool()
	ca.AddCert(c.Certificate())
	return httpAddr, ca
}

func benchClient(proxyAddr string, roots *x509.CertPool, keepAlive bool) *http.Client {
	tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, ServerName: "example.com"}, DisableKeepAlives: !keepAlive,
		TLSNextProto: map[string]func(string, *tls.Conn) http.RoundTripper{}, DisableCompression: true}
	if proxyAddr != "" {
		tr.Proxy = func(*http.Request) (*url.URL, error) { return url.Parse("http://" + proxyAddr) }
	} else {
		tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
			_, port, _ := net.SplitHostPort(addr)
			return (&net.Dialer{}).DialContext(ctx, network, "127.0.0.1:"+port)
		}
	}
	return &http.Client{Transport: tr}
}

func BenchmarkTerminateDownload(b *testing.B) {
	const size = 64 << 20
	port, roots := bigUpstream(b, size)
	httpAddr, ca := benchProxy(b, roots)
	for _, tc := range []struct {
		name string
		c    *http.Client
	}{{"direct", benchClient("", roots, true)}, {"terminated", benchClient(httpAddr, ca, true)}} {
		b.Run(tc.name, func(b *testing.B) {
			b.SetBytes(size)
			for b.Loop() {
				resp, err := tc.c.Get("https://example.com:" + port + "/big")
				if err != nil {
					b.Fatal(err)
				}
				n, _ := io.Copy(io.Discard, resp.Body)
				resp.Body.Close()
				if n != size {
					b.Fatalf("read %d bytes", n)
				}
			}
		})
	}
}

// Time to the first byte of a new connection (a new TLS handshake each
// time; the terminating proxy's leaf is cached after the first), p50.
func BenchmarkTerminateFirstByte(b *testing.B) {
	port, roots := bigUpstream(b, 1)
	httpAddr, ca := benchProxy(b, roots)
	for _, tc := range []struct {
		name string
		c    *http.Client
	}{{"direct", benchClient("", roots, false)}, {"terminated", benchClient(httpAddr, ca, false)}} {
		b.Run(tc.name, func(b *testing.B) {
			var samples []time.Duration
			for b.Loop() {
				start := time.Now()
				resp, err := tc.c.Get("https://example.com:" + port + "/one")
				if err != nil {
					b.Fatal(err)
				}
				var one [1]byte
				io.ReadFull(resp.Body, one[:])
				samples = append(samples, time.Since(start))
				resp.Body.Close()
			}
			sort.Slice(samples, func(i, j int) bool { return samples[i] < samples[j] })
			b.ReportMetric(float64(samples[len(samples)/2].Microseconds())/1000, "ms-p50")
		})
	}
}

// What one idle terminated tunnel holds in srt: the heap and stacks this
// process added over 200 tunnels, each left open after one request. The
// command's side is a bare TLS connection (no goroutine), counted too:
// the figure is an upper bound.
func BenchmarkTerminateIdleTunnel(b *testing.B) {
	port, roots := bigUpstream(b, 1)
	httpAddr, ca := benchProxy(b, roots)
	const n = 200
	for b.Loop() {
		var conns []net.Conn
		before := heapAndStacks()
		for range n {
			head, c := connectHTTP(b, httpAddr, "example.com:"+port)
			if c == nil {
				b.Fatal(head)
			}
			tc := tls.Client(c, &tls.Config{RootCAs: ca, ServerName: "example.com", NextProtos: []string{"http/1.1"}})
			fmt.Fprintf(tc, "GET /one HTTP/1.1\r\nHost: example.com:%s\r\n\r\n", port)
			resp, err := http.ReadResponse(bufio.NewReader(tc), nil)
			if err != nil {
				b.Fatal(err)
			}
			io.Copy(io.Discard, resp.Body)
			conns = append(conns, tc)
		}
		time.Sleep(100 * time.Millisecond)
		after := heapAndStacks()
		b.ReportMetric(float64(after-before)/n/1024, "KiB/tunnel")
		for _, c := range conns {
			c.Close()
		}
	}
}

// heapAndStacks is the memory this process holds in use, after a GC:
// the proxy's share is what grows with its tunnels (the test's own
// clients are on the other side of each, and counted too, so the figure
// is an upper bound).
func heapAndStacks() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse + m.StackInuse
}
