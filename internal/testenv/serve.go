package testenv

import (
	"fmt"
	"io"
	"net"
	"os"
	"sync/atomic"
	"testing"
)

// ServeTCP listens on an ephemeral port of 127.0.0.1 until the test ends
// and runs handle for each connection in a goroutine of its own, closing
// the connection when handle returns. It returns the port.
func ServeTCP(t testing.TB, handle func(c net.Conn)) int {
	t.Helper()
	return Serve(t, "tcp", "127.0.0.1:0", handle).Addr().(*net.TCPAddr).Port
}

// Serve is ServeTCP on any stream network and address; it returns the
// listener.
func Serve(t testing.TB, network, address string, handle func(c net.Conn)) net.Listener {
	t.Helper()
	ln, err := net.Listen(network, address)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				handle(c)
			}()
		}
	}()
	return ln
}

// ServeOK is ServeTCP with a handler that answers any request with
// "HTTP/1.1 200" and body "ok"; it returns "127.0.0.1:port" and the
// number of connections so far.
func ServeOK(t testing.TB) (addr string, hits func() int) {
	t.Helper()
	var n atomic.Int64
	port := ServeTCP(t, func(c net.Conn) {
		n.Add(1)
		c.Read(make([]byte, 4096))
		io.WriteString(c, "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
	})
	return fmt.Sprintf("127.0.0.1:%d", port), func() int { return int(n.Load()) }
}

// ListenUnix listens on the Unix socket path (mode 0777, so any user of
// the test may try it) until the test ends; the function returned
// reports whether anything has connected.
func ListenUnix(t testing.TB, path string) (connected func() bool) {
	t.Helper()
	ln, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	if err := os.Chmod(path, 0o777); err != nil {
		t.Fatal(err)
	}
	var got atomic.Bool
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			got.Store(true)
			c.Close()
		}
	}()
	return got.Load
}

// ShortTempDir is a new directory under /tmp, removed after the test: a
// Unix socket's path must fit in sun_path's 108 bytes (104 on macOS),
// whatever TMPDIR's length.
func ShortTempDir(t testing.TB, prefix string) string {
	t.Helper()
	dir, err := os.MkdirTemp("/tmp", prefix)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	return dir
}
