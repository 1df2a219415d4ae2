package proxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"syscall"
	"time"

	"github.com/srt-go/srt/netfilter"
)

// SOCKS5 reply codes (RFC 1928).
const (
	socksSucceeded          = 0x00
	socksGeneralFailure     = 0x01
	socksNotAllowed         = 0x02
	socksHostUnreachable    = 0x04
	socksConnectionRefused  = 0x05
	socksCommandUnsupported = 0x07
	socksAddressUnsupported = 0x08
)

// socksRequest is a parsed SOCKS5 CONNECT.
type socksRequest struct {
	host string // a name, or an address in canonical text
	port uint16
}

// errSOCKS carries the reply code a malformed request gets.
type errSOCKS struct {
	code byte
	msg  string
}

func (e *errSOCKS) Error() string { return e.msg }

// readSOCKS reads the greeting and the request. Without a credential it
// offers only "no authentication" (the proxy listens where only the
// sandbox reaches); with one, only username/password (RFC 1929).
func readSOCKS(r *bufio.Reader, w io.Writer, cred *Credential) (socksRequest, error) {
	var hdr [2]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return socksRequest{}, err
	}
	if hdr[0] != 5 {
		return socksRequest{}, fmt.Errorf("SOCKS version %d, want 5", hdr[0])
	}
	methods := make([]byte, hdr[1])
	if _, err := io.ReadFull(r, methods); err != nil {
		return socksRequest{}, err
	}
	want := byte(0) // no authentication
	if cred != nil {
		want = 2 // username/password
	}
	offered := false
	for _, m := range methods {
		offered = offered || m == want
	}
	if !offered {
		w.Write([]byte{5, 0xff})
		return socksRequest{}, fmt.Errorf("the client does not offer method %d", want)
	}
	if _, err := w.Write([]byte{5, want}); err != nil {
		return socksRequest{}, err
	}
	if cred != nil {
		if err := socksLogin(r, w, cred); err != nil {
			return socksRequest{}, err
		}
	}
	var req [4]byte
	if _, err := io.ReadFull(r, req[:]); err != nil {
		return socksRequest{}, err
	}
	if req[0] != 5 {
		return socksRequest{}, &errSOCKS{socksGeneralFailure, "bad request version"}
	}
	if req[1] != 1 {
		return socksRequest{}, &errSOCKS{socksCommandUnsupported, fmt.Sprintf("command %d is not supported (only CONNECT)", req[1])}
	}
	var host string
	switch req[3] {
	case 1:
		var a [4]byte
		if _, err := io.ReadFull(r, a[:]); err != nil {
			return socksRequest{}, err
		}
		host = netip.AddrFrom4(a).String()
	case 4:
		var a [16]byte
		if _, err := io.ReadFull(r, a[:]); err != nil {
			return socksRequest{}, err
		}
		host = netip.AddrFrom16(a).Unmap().String()
	case 3:
		n, err := r.ReadByte()
		if err != nil {
			return socksRequest{}, err
		}
		name := make([]byte, n)
		if _, err := io.ReadFull(r, name); err != nil {
			return socksRequest{}, err
		}
		// A name the canonicaliser refuses (NUL, '%', spaces, numeric
		// tricks that are not an address) is refused here, before any
		// rule could be fooled by it.
		if _, err := netfilter.ParseHost(string(name)); err != nil {
			return socksRequest{}, &errSOCKS{socksNotAllowed, err.Error()}
		}
		host = string(name)
	default:
		return socksRequest{}, &errSOCKS{socksAddressUnsupported, fmt.Sprintf("address type %d", req[3])}
	}
	var port [2]byte
	if _, err := io.ReadFull(r, port[:]); err != nil {
		return socksRequest{}, err
	}
	p := binary.BigEndian.Uint16(port[:])
	if p == 0 {
		return socksRequest{}, &errSOCKS{socksNotAllowed, "port 0"}
	}
	return socksRequest{host: host, port: p}, nil
}

func socksReply(w io.Writer, code byte) error {
	_, err := w.Write([]byte{5, code, 0, 1, 0, 0, 0, 0, 0, 0})
	return err
}

// handleSOCKS serves one SOCKS5 connection. When the client is full, the
// CONNECT is answered "general failure".
func (s *Server) handleSOCKS(c net.Conn, client *Client, full bool) {
	c.SetDeadline(time.Now().Add(HandshakeTimeout))
	br := bufio.NewReader(c)
	var cred *Credential
	if client != nil {
		cred = client.Credential
	}
	req, err := readSOCKS(br, c, cred)
	if err != nil {
		var se *errSOCKS
		if errors.As(err, &se) {
			socksReply(c, se.code)
		}
		return
	}
	if full {
		s.refuse(client, "socks5", req.host, req.port)
		socksReply(c, socksGeneralFailure)
		return
	}
	d, p := s.decide(client, "socks5", req.host, req.port)
	if !d.Allowed {
		socksReply(c, socksNotAllowed)
		return
	}
	if ins, t, refuse := s.terminating(client, "socks5", req.host, req.port); ins != nil {
		if !ins.acquire(client, "socks5", req.host, req.port) {
			socksReply(c, socksGeneralFailure)
			return
		}
		ins.serveAnswered(c, br, t, func() error { return socksReply(c, socksSucceeded) })
		return
	} else if refuse {
		s.refuseOpaque(client, "socks5", req.host, req.port, "")
		socksReply(c, socksGeneralFailure)
		return
	}
	up, err := s.dialAllowed(context.Background(), client, p, "socks5", req.host, req.port)
	if err != nil {
		var re *netfilter.ResolvedError
		switch {
		case errors.As(err, &re):
			socksReply(c, socksNotAllowed)
		case errors.Is(err, syscall.ECONNREFUSED):
			socksReply(c, socksConnectionRefused)
		default:
			socksReply(c, socksHostUnreachable)
		}
		return
	}
	defer up.Close()
	if socksReply(c, socksSucceeded) != nil {
		return
	}
	c.SetDeadline(time.Time{})
	s.join(c, up, pending(br))
}

// socksLogin runs the username/password sub-negotiation (RFC 1929).
func socksLogin(r *bufio.Reader, w io.Writer, cred *Credential) error {
	ver, err := r.ReadByte()
	if err != nil {
		return err
	}
	if ver != 1 {
		w.Write([]byte{1, 1})
		return fmt.Errorf("username/password version %d, want 1", ver)
	}
	field := func() (string, error) {
		n, err := r.ReadByte()
		if err != nil {
			return "", err
		}
		b := make([]byte, n)
		_, err = io.ReadFull(r, b)
		return string(b), err
	}
	user, err := field()
	if err != nil {
		return err
	}
	password, err := field()
	if err != nil {
		return err
	}
	if !cred.matches(user, password) {
		w.Write([]byte{1, 1})
		return errors.New("wrong proxy credential")
	}
	_, err = w.Write([]byte{1, 0})
	return err
}
