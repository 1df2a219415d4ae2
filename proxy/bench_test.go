package proxy

import (
	"fmt"
	"github.com/srt-go/srt/internal/testenv"
	"io"
	"net"
	"os"
	"runtime"
	"testing"
	"time"
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
