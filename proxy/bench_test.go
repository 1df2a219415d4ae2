package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/miekg/dns"

	"github.com/srt-go/srt/internal/testenv"
)

const benchBytes = 64 << 20

// source serves benchBytes to every connection.
func source(b *testing.B) uint16 {
	chunk := make([]byte, 256<<10)
	return uint16(testenv.ServeTCP(b, func(c net.Conn) {
		for sent := 0; sent < benchBytes; sent += len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	}))
}

func drain(b *testing.B, c net.Conn) {
	n, err := io.Copy(io.Discard, c)
	c.Close()
	if err != nil || n != benchBytes {
		b.Fatalf("read %d bytes: %v", n, err)
	}
}

// BenchmarkThroughput compares a 64 MiB download over loopback directly
// and through the SOCKS proxy, side by side.
func BenchmarkThroughput(b *testing.B) {
	port := source(b)
	b.Run("direct", func(b *testing.B) {
		b.SetBytes(benchBytes)
		for b.Loop() {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				b.Fatal(err)
			}
			drain(b, c)
		}
	})
	b.Run("socks-proxy", func(b *testing.B) {
		s := New(policy(b, []string{fmt.Sprintf("127.0.0.1:%d", port)}, nil, nil))
		_, sa := start(b, s)
		b.SetBytes(benchBytes)
		for b.Loop() {
			code, c := socksConnectB(b, sa, port)
			if code != socksSucceeded {
				b.Fatalf("reply %d", code)
			}
			drain(b, c)
		}
	})
}

// oneByteServer answers every connection with one byte and closes it.
func oneByteServer(b *testing.B) uint16 {
	return uint16(testenv.ServeTCP(b, func(c net.Conn) { c.Write([]byte("x")) }))
}

// BenchmarkConnectionSetup is the cost of one proxied connection (decide,
// dial, tunnel, close) against a direct one.
func BenchmarkConnectionSetup(b *testing.B) {
	port := oneByteServer(b)
	one := func(b *testing.B, c net.Conn) {
		var buf [1]byte
		if _, err := io.ReadFull(c, buf[:]); err != nil {
			b.Fatal(err)
		}
		c.Close()
	}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
			if err != nil {
				b.Fatal(err)
			}
			one(b, c)
		}
	})
	b.Run("socks-proxy", func(b *testing.B) {
		s := New(policy(b, []string{fmt.Sprintf("127.0.0.1:%d", port)}, nil, nil))
		_, sa := start(b, s)
		for b.Loop() {
			code, c := socksConnectB(b, sa, port)
			if code != socksSucceeded {
				b.Fatalf("reply %d", code)
			}
			one(b, c)
		}
	})
}

func socksConnectB(b *testing.B, addr string, port uint16) (byte, net.Conn) {
	c, err := net.Dial("tcp", addr)
	if err != nil {
		b.Fatal(err)
	}
	c.Write([]byte{5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, byte(port >> 8), byte(port)})
	var rep [12]byte
	if _, err := io.ReadFull(c, rep[:12]); err != nil {
		b.Fatal(err)
	}
	return rep[3], c
}

// BenchmarkSequentialConnections runs b.N proxied connections one after
// another (go test -bench Sequential -benchtime 10000x) and reports, and
// fails on, growth of goroutines or open descriptors.
func BenchmarkSequentialConnections(b *testing.B) {
	port := oneByteServer(b)
	s := New(policy(b, []string{fmt.Sprintf("127.0.0.1:%d", port)}, nil, nil))
	_, sa := start(b, s)
	countFDs := func() int {
		entries, _ := os.ReadDir("/proc/self/fd")
		return len(entries)
	}
	var buf [1]byte
	// Warm up first: the runtime's poller and the first connections'
	// buffers are not growth.
	for i := 0; i < 100; i++ {
		_, c := socksConnectB(b, sa, port)
		io.ReadFull(c, buf[:])
		c.Close()
	}
	time.Sleep(100 * time.Millisecond)
	g0, f0 := runtime.NumGoroutine(), countFDs()
	for b.Loop() {
		code, c := socksConnectB(b, sa, port)
		if code != socksSucceeded {
			b.Fatalf("reply %d", code)
		}
		io.ReadFull(c, buf[:])
		c.Close()
	}
	b.StopTimer()
	deadline := time.Now().Add(5 * time.Second)
	g, f := runtime.NumGoroutine(), countFDs()
	for (g > g0+2 || f > f0+2) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
		g, f = runtime.NumGoroutine(), countFDs()
	}
	b.ReportMetric(float64(g-g0), "goroutines-grown")
	b.ReportMetric(float64(f-f0), "fds-grown")
	if g > g0+2 || f > f0+2 {
		b.Fatalf("after %d connections: goroutines %d -> %d, fds %d -> %d", b.N, g0, g, f0, f)
	}
}

// afterHead serves every connection once it has read an HTTP request
// head: first says what the transparent path decides by, and nothing is
// left unread when the server closes (which would reset the connection).
func afterHead(b *testing.B, serve func(c net.Conn)) uint16 {
	return uint16(testenv.ServeTCP(b, func(c net.Conn) {
		br := bufio.NewReader(c)
		for {
			line, err := br.ReadString('\n')
			if err != nil {
				return
			}
			if line == "\r\n" {
				break
			}
		}
		serve(c)
	}))
}

// BenchmarkTransparent compares a connection of the transparent path
// decided and dialled in the proxy's process ("in-process") with one
// handed over a Unix socket to the SOCKS proxy, as the sandbox's
// transparent path did before ("socks-hop"), and a direct one: setup
// (request, one byte back, close) and a 64 MiB download. Run it with
// -count for interleaved samples.
func BenchmarkTransparent(b *testing.B) {
	chunk := make([]byte, 256<<10)
	setup := afterHead(b, func(c net.Conn) { c.Write([]byte("x")) })
	bulk := afterHead(b, func(c net.Conn) {
		for sent := 0; sent < benchBytes; sent += len(chunk) {
			if _, err := c.Write(chunk); err != nil {
				return
			}
		}
	})
	s := New(policy(b, []string{fmt.Sprintf("127.0.0.1:%d", setup), fmt.Sprintf("127.0.0.1:%d", bulk)}, nil, nil))
	b.Cleanup(func() { s.Close() })
	dir, err := os.MkdirTemp("", "srt-bench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	socks := filepath.Join(dir, "socks.sock")
	ul, err := net.Listen("unix", socks)
	if err != nil {
		b.Fatal(err)
	}
	go s.ServeSOCKS(ul, nil)
	client := &Client{ID: "bench"}
	inProcess := newSandbox(b, func(tr Transparent, dst dstFunc) { s.serveTransparent(client, tr, dst) })
	hop := newSandbox(b, func(tr Transparent, dst dstFunc) { forwardTransparent(tr, "unix", socks, dst) })
	paths := []struct {
		name    string
		connect func(to netip.AddrPort) (net.Conn, error)
	}{
		{"direct", func(to netip.AddrPort) (net.Conn, error) { return net.Dial("tcp", to.String()) }},
		{"socks-hop", hop.connect},
		{"in-process", inProcess.connect},
	}
	lo := netip.MustParseAddr("127.0.0.1")
	open := func(b *testing.B, connect func(netip.AddrPort) (net.Conn, error), port uint16) net.Conn {
		c, err := connect(netip.AddrPortFrom(lo, port))
		if err != nil {
			b.Fatal(err)
		}
		fmt.Fprintf(c, "GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port)
		return c
	}
	for _, p := range paths {
		b.Run("setup/"+p.name, func(b *testing.B) {
			var buf [1]byte
			for b.Loop() {
				c := open(b, p.connect, setup)
				if _, err := io.ReadFull(c, buf[:]); err != nil {
					b.Fatal(err)
				}
				c.Close()
			}
		})
	}
	for _, p := range paths {
		b.Run("download/"+p.name, func(b *testing.B) {
			b.SetBytes(benchBytes)
			for b.Loop() {
				drain(b, open(b, p.connect, bulk))
			}
		})
	}
}

// BenchmarkTransparentDNS is one question to the DNS stub over UDP,
// answered from the policy in the proxy's process. (Asking the SOCKS
// proxy over a Unix socket, as the stub did before, took 169.5 us where
// this took 34.8 us: medians of 15 interleaved runs on a 2-core VM.)
func BenchmarkTransparentDNS(b *testing.B) {
	s := New(policy(b, []string{"allowed.test"}, nil, nil))
	b.Cleanup(func() { s.Close() })
	sb := newSandbox(b, func(tr Transparent, dst dstFunc) { s.serveTransparent(&Client{ID: "bench"}, tr, dst) })
	c, err := net.Dial("udp", sb.dnsUDP)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	dc := &dns.Conn{Conn: c}
	q := new(dns.Msg)
	q.SetQuestion("allowed.test.", dns.TypeA)
	for b.Loop() {
		if err := dc.WriteMsg(q); err != nil {
			b.Fatal(err)
		}
		r, err := dc.ReadMsg()
		if err != nil || r.Rcode != dns.RcodeSuccess {
			b.Fatalf("%v %v", r, err)
		}
	}
}
