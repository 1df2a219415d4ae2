package nsexec

import (
	"fmt"
	"net"
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// The sandbox's network namespace: loopback up, the proxies' ports and the
// transparent path's sockets opened and handed to srt.

// handOverSockets opens the command's ways out and sends their sockets
// to srt over the link, in one message: the proxies' loopback ports
// (IPv4, and IPv6 where the kernel has it), and, when asked, the
// transparent path's listeners and the DNS stub's sockets behind routes
// that make every address local and an nftables redirect. srt serves
// them all, so nothing in the sandbox relays a byte; connections made
// before srt accepts wait in the backlog.
func handOverSockets(spec *Spec, link *os.File) error {
	var msg linkMessage
	var files []*os.File
	defer func() {
		for _, f := range files {
			f.Close()
		}
	}()
	add := func(s linkSocket, c fileConn) error {
		f, err := c.File()
		c.Close() // the duplicate in f keeps the socket
		if err != nil {
			return err
		}
		files = append(files, f)
		msg.Sockets = append(msg.Sockets, s)
		return nil
	}
	for _, port := range spec.ProxyPorts {
		for _, host := range []string{"127.0.0.1", "::1"} {
			ln, err := Listen("tcp", net.JoinHostPort(host, strconv.Itoa(port)))
			if err != nil {
				if host == "::1" {
					continue // no IPv6 loopback in this kernel
				}
				return fmt.Errorf("proxy port %d: %w", port, err)
			}
			if err := add(linkSocket{Kind: socketProxy, Port: port}, ln.(*net.TCPListener)); err != nil {
				return err
			}
		}
	}
	if spec.Intercept {
		socks, err := openInterception()
		if err != nil && spec.Debug {
			// The network stays closed without it: only the programs
			// that ignore the proxy variables are left without a way out.
			fmt.Fprintf(os.Stderr, "[SandboxDebug] transparent network path unavailable: %v\n", err)
		}
		for _, o := range socks {
			if err := add(o.socket, o.conn); err != nil {
				return err
			}
		}
	}
	if len(files) == 0 {
		return nil
	}
	fds := make([]int, len(files))
	for i, f := range files {
		fds[i] = int(f.Fd())
	}
	if err := sendLink(link, &msg, fds); err != nil {
		return fmt.Errorf("handing the network's sockets to srt: %w", err)
	}
	return nil
}

// loopbackUp sets lo up in the new network namespace; nothing else exists
// there, so nothing leaves it.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return err
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	return unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr)
}
