package proxy

import (
	"bytes"
	"crypto/rand"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/testenv"
)

// pipesOpen counts this process's open pipes.
func pipesOpen(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("requires /proc/self/fd")
	}
	n := 0
	for _, e := range entries {
		if l, err := os.Readlink(filepath.Join("/proc/self/fd", e.Name())); err == nil && strings.HasPrefix(l, "pipe:") {
			n++
		}
	}
	return n
}

// Tunnels splice through pipes of their own, held only while bytes are
// in flight: idle tunnels hold none, closed ones none at all, without
// waiting for the garbage collector (io.Copy's pool of pipes held 4
// descriptors an idle tunnel, and kept them after it closed).
func TestTunnelsReleasePipes(t *testing.T) {
	echo := uint16(serveEcho(t))
	s := New(policy(t, []string{fmt.Sprintf("127.0.0.1:%d", echo)}, nil, nil))
	h, sa := start(t, s)
	p0, f0 := pipesOpen(t), openFDs(t)
	const n = 50
	var open []net.Conn
	for i := range n {
		var c net.Conn
		if i%2 == 0 {
			_, c = connectHTTP(t, h, fmt.Sprintf("127.0.0.1:%d", echo))
		} else {
			var code byte
			code, c = socksConnect(t, sa, 1, []byte{127, 0, 0, 1}, echo)
			if code != socksSucceeded {
				c = nil
			}
		}
		if c == nil {
			t.Fatalf("tunnel %d refused", i)
		}
		open = append(open, c)
		c.SetDeadline(time.Now().Add(5 * time.Second))
		// Bytes both ways: each direction has spliced.
		if _, err := c.Write([]byte("ping")); err != nil {
			t.Fatal(err)
		}
		var b [4]byte
		if _, err := io.ReadFull(c, b[:]); err != nil || string(b[:]) != "ping" {
			t.Fatalf("tunnel %d: %q, %v", i, b, err)
		}
	}
	settled := func(what string, pipes, fds int) {
		t.Helper()
		deadline := time.Now().Add(5 * time.Second)
		for pipesOpen(t) != pipes || openFDs(t) > fds {
			if time.Now().After(deadline) {
				t.Fatalf("%s: %d pipes, %d descriptors; want %d pipes, at most %d descriptors", what, pipesOpen(t), openFDs(t), pipes, fds)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// Four sockets a tunnel in this process: the client's, the proxy's
	// two and the echo server's.
	settled(fmt.Sprintf("%d idle tunnels", n), p0, f0+4*n+2)
	for _, c := range open {
		c.Close()
	}
	settled("their tunnels closed", p0, f0+2)
}

// serveEcho serves an echo server that copies through a buffer
// (io.Copy would splice, through the pool of pipes being counted).
func serveEcho(t *testing.T) int {
	return testenv.ServeTCP(t, func(c net.Conn) {
		buf := make([]byte, 4096)
		for {
			n, err := c.Read(buf)
			if n > 0 {
				c.Write(buf[:n])
			}
			if err != nil {
				return
			}
		}
	})
}

// copyStream moves every byte, in order, between every pair of socket
// kinds srt joins, spliced or not, and reports how many it moved.
func TestCopyStream(t *testing.T) {
	// Short: a socket path must fit in sun_path's 108 bytes, whatever
	// TMPDIR is.
	dir, err := os.MkdirTemp("/tmp", "srt-cs-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	pair := func(network string) (net.Conn, net.Conn) {
		addr := "127.0.0.1:0"
		if network == "unix" {
			addr = filepath.Join(dir, fmt.Sprintf("s%d", time.Now().UnixNano()))
		}
		if network == "pipe" {
			return net.Pipe()
		}
		ln, err := net.Listen(network, addr)
		if err != nil {
			t.Fatal(err)
		}
		defer ln.Close()
		a, err := net.Dial(network, ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		b, err := ln.Accept()
		if err != nil {
			t.Fatal(err)
		}
		return a, b
	}
	data := make([]byte, 3<<20+17)
	rand.Read(data)
	for _, kinds := range [][2]string{{"tcp", "tcp"}, {"unix", "tcp"}, {"tcp", "unix"}, {"unix", "unix"}, {"pipe", "tcp"}, {"tcp", "pipe"}} {
		t.Run(kinds[0]+"-to-"+kinds[1], func(t *testing.T) {
			writer, src := pair(kinds[0])
			dst, reader := pair(kinds[1])
			if kinds[0] != "pipe" && kinds[1] != "pipe" {
				_, okSrc := rawStream(src)
				_, okDst := rawStream(dst)
				if !okSrc || !okDst {
					t.Errorf("not spliced: source %v, destination %v", okSrc, okDst)
				}
			}
			defer func() {
				for _, c := range []net.Conn{writer, src, dst, reader} {
					c.Close()
				}
			}()
			type result struct {
				n   int64
				err error
			}
			done := make(chan result, 1)
			go func() {
				n, err := copyStream(dst, src)
				dst.Close()
				done <- result{n, err}
			}()
			go func() {
				writer.Write(data)
				writer.Close()
			}()
			got, err := io.ReadAll(reader)
			if err != nil {
				t.Fatal(err)
			}
			r := <-done
			if !bytes.Equal(got, data) || r.n != int64(len(data)) || r.err != nil {
				t.Errorf("moved %d bytes (%v), read %d, equal %v; want %d", r.n, r.err, len(got), bytes.Equal(got, data), len(data))
			}
		})
	}
}
