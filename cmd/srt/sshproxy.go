package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"strconv"

	"github.com/srt-go/srt/proxy"
)

// The proxies' loopback ports inside the sandbox, as the reference uses them.
const (
	proxyHTTPPort  = 3128
	proxySOCKSPort = 1080
)

// sshProxy is "srt ssh-proxy HOST PORT": ssh's ProxyCommand inside the
// sandbox. It asks the SOCKS proxy for HOST:PORT and relays stdin and
// stdout, so git's ssh goes through the policy with no nc or socat.
func sshProxy(c *cli, args []string) int {
	if len(args) != 2 {
		c.errorf("usage: srt ssh-proxy HOST PORT")
		return 1
	}
	port, err := strconv.ParseUint(args[1], 10, 16)
	if err != nil || port == 0 {
		c.errorf("ssh-proxy: bad port %q", args[1])
		return 1
	}
	conn, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", proxySOCKSPort))
	if err != nil {
		c.errorf("ssh-proxy: the sandbox's SOCKS proxy is not reachable: %v", err)
		return 1
	}
	defer conn.Close()
	if err := proxy.SOCKSConnect(conn, args[0], uint16(port)); err != nil {
		c.errorf("ssh-proxy: %s:%d: %v", args[0], port, err)
		return 1
	}
	done := make(chan struct{})
	go func() {
		io.Copy(os.Stdout, conn)
		close(done)
	}()
	io.Copy(conn, os.Stdin)
	if tc, ok := conn.(*net.TCPConn); ok {
		tc.CloseWrite()
	}
	<-done
	return 0
}
