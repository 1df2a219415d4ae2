package testenv

import (
	"net"
	"testing"
)

// ServeTCP listens on an ephemeral port of 127.0.0.1 until the test ends
// and runs handle for each connection in a goroutine of its own, closing
// the connection when handle returns. It returns the port.
func ServeTCP(t testing.TB, handle func(c net.Conn)) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
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
	return ln.Addr().(*net.TCPAddr).Port
}
