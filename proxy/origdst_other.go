//go:build !linux

package proxy

import (
	"errors"
	"net"
	"net/netip"
)

// originalDst: only the Linux sandbox redirects connections into a
// transparent path.
func originalDst(net.Conn) (netip.AddrPort, error) {
	return netip.AddrPort{}, errors.ErrUnsupported
}
