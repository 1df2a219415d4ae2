package proxy

import (
	"encoding/binary"
	"fmt"
	"net"
	"net/netip"
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// originalDst reads where a connection that the sandbox's nftables
// redirect sent to a transparent listener was meant to go: the
// destination the redirect replaced, which conntrack keeps for the
// connection (SO_ORIGINAL_DST; at the IPv6 level IP6T_SO_ORIGINAL_DST,
// the same number). The socket's own family says which to ask.
func originalDst(c net.Conn) (netip.AddrPort, error) {
	sc, ok := c.(syscall.Conn)
	if !ok {
		return netip.AddrPort{}, fmt.Errorf("original destination: a %T is not a socket", c)
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return netip.AddrPort{}, err
	}
	var dst netip.AddrPort
	var serr error
	if err := rc.Control(func(fd uintptr) { dst, serr = originalDstOf(int(fd)) }); err != nil {
		return netip.AddrPort{}, err
	}
	return dst, serr
}

func originalDstOf(fd int) (netip.AddrPort, error) {
	family, err := unix.GetsockoptInt(fd, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return netip.AddrPort{}, os.NewSyscallError("getsockopt SO_DOMAIN", err)
	}
	switch family {
	case unix.AF_INET:
		// A struct sockaddr_in (family, port, address), read into the
		// first 16 bytes of an IPv6Mreq: x/sys/unix has no getter for
		// a sockaddr, and the kernel writes no more than one.
		m, err := unix.GetsockoptIPv6Mreq(fd, unix.SOL_IP, unix.SO_ORIGINAL_DST)
		if err != nil {
			return netip.AddrPort{}, os.NewSyscallError("getsockopt SO_ORIGINAL_DST", err)
		}
		b := m.Multiaddr
		return netip.AddrPortFrom(netip.AddrFrom4([4]byte{b[4], b[5], b[6], b[7]}), binary.BigEndian.Uint16(b[2:4])), nil
	case unix.AF_INET6:
		// A struct sockaddr_in6, which an IPv6MTUInfo begins with.
		info, err := unix.GetsockoptIPv6MTUInfo(fd, unix.SOL_IPV6, unix.SO_ORIGINAL_DST)
		if err != nil {
			return netip.AddrPort{}, os.NewSyscallError("getsockopt IP6T_SO_ORIGINAL_DST", err)
		}
		// The port field holds network-order bytes in a native integer.
		var p [2]byte
		binary.NativeEndian.PutUint16(p[:], info.Addr.Port)
		return netip.AddrPortFrom(netip.AddrFrom16(info.Addr.Addr).Unmap(), binary.BigEndian.Uint16(p[:])), nil
	}
	return netip.AddrPort{}, fmt.Errorf("original destination: socket family %d is not IP", family)
}
