package proxy

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"time"
)

// SOCKSConnect asks the SOCKS5 server on c for a tunnel to host:port
// (a name, or an address), without authentication. On success c is the
// tunnel.
func SOCKSConnect(c net.Conn, host string, port uint16) error {
	c.SetDeadline(time.Now().Add(DialTimeout + HandshakeTimeout))
	defer c.SetDeadline(time.Time{})
	req := []byte{5, 1, 0, 5, 1, 0}
	if a, err := netip.ParseAddr(host); err == nil {
		if a.Is4() {
			req = append(append(req, 1), a.AsSlice()...)
		} else {
			req = append(append(req, 4), a.AsSlice()...)
		}
	} else {
		if len(host) == 0 || len(host) > 255 {
			return errors.New("the name must have 1 to 255 bytes")
		}
		req = append(append(req, 3, byte(len(host))), host...)
	}
	req = binary.BigEndian.AppendUint16(req, port)
	if _, err := c.Write(req); err != nil {
		return err
	}
	var method [2]byte
	if _, err := io.ReadFull(c, method[:]); err != nil {
		return err
	}
	if method != [2]byte{5, 0} {
		return fmt.Errorf("the SOCKS server wants authentication (%x)", method)
	}
	var rep [4]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		return err
	}
	if rep[1] != 0 {
		return &RefusedError{Code: rep[1]}
	}
	var rest int
	switch rep[3] {
	case 1:
		rest = 4 + 2
	case 4:
		rest = 16 + 2
	case 3:
		var n [1]byte
		if _, err := io.ReadFull(c, n[:]); err != nil {
			return err
		}
		rest = int(n[0]) + 2
	default:
		return fmt.Errorf("bad SOCKS reply address type %d", rep[3])
	}
	_, err := io.ReadFull(c, make([]byte, rest))
	return err
}

// RefusedError is a SOCKS reply other than success.
type RefusedError struct{ Code byte }

func (e *RefusedError) Error() string {
	switch e.Code {
	case socksNotAllowed:
		return "refused by the sandbox's network policy"
	case socksHostUnreachable:
		return "host unreachable"
	case socksConnectionRefused:
		return "connection refused"
	}
	return fmt.Sprintf("SOCKS reply %d", e.Code)
}
