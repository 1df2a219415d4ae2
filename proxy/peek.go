package proxy

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"net"
	"net/http"
	"time"

	"github.com/srt-go/srt/netfilter"
)

// Reading the name a redirected connection asks for. A connection to a
// real address (hard-coded, or from /etc/hosts) is sent to the name in
// the TLS SNI or HTTP Host it starts with, never to the address, so that
// an allowed name cannot front for an address the policy never allowed.

// peekTimeout bounds the wait for a connection's first bytes. A client
// that speaks first (TLS, HTTP) sends them at once; one whose server
// speaks first (ssh, SMTP) is decided by its address after this long.
const peekTimeout = 500 * time.Millisecond

// peekMax is the most read to find a name: a TLS record header and the
// largest record a ClientHello may come in (2^14 bytes of plaintext).
const peekMax = 5 + maxRecord

// maxRecord is the largest TLSPlaintext record (RFC 8446, 5.1).
const maxRecord = 1 << 14

// httpHeadMax bounds the HTTP request head searched for a Host: past it,
// the connection is decided by its address.
const httpHeadMax = 8 << 10

// peekName reads what c sends first, for at most peekTimeout, and finds
// the name it asks for. It returns the name ("" when the stream names
// none), the bytes read (to be sent on first), and an error when the
// stream names a host the canonicaliser refuses.
func peekName(c net.Conn) (string, []byte, error) {
	head := peek(c, func(b []byte) bool {
		_, complete, _ := nameIn(b)
		return complete
	})
	name, _, err := nameIn(head)
	return name, head, err
}

// peekHead reads what c sends first, for at most peekTimeout: up to a
// complete request head, or a TLS record's worth.
func peekHead(c net.Conn) []byte {
	return peek(c, func(b []byte) bool {
		return b[0] == recordHandshake || bytes.Contains(b, []byte("\r\n\r\n")) || bytes.Contains(b, []byte("\n\n"))
	})
}

// peek reads from c, for at most peekTimeout and peekMax bytes, until
// enough says what it has read (never empty) is enough.
func peek(c net.Conn, enough func([]byte) bool) []byte {
	c.SetReadDeadline(time.Now().Add(peekTimeout))
	defer c.SetReadDeadline(time.Time{})
	buf := make([]byte, peekMax)
	n := 0
	for n < len(buf) {
		k, err := c.Read(buf[n:])
		n += k
		if err != nil || n > 0 && enough(buf[:n]) {
			break
		}
	}
	return buf[:n]
}

// nameIn parses the start of a stream: a TLS ClientHello's server name,
// or an HTTP request's Host. complete is false while more bytes could
// still change the answer. A name is returned only if
// netfilter.ParseHost accepts it; one it refuses is an error, so that
// the caller refuses the connection rather than decide it by its
// address (a client that names a host is asking for that host).
func nameIn(b []byte) (name string, complete bool, err error) {
	if len(b) == 0 {
		return "", false, nil
	}
	if b[0] == recordHandshake {
		name, complete = sniOf(b)
	} else {
		name, complete = hostOf(b)
	}
	if name == "" {
		return "", complete, nil
	}
	if _, err := netfilter.ParseHost(name); err != nil {
		return "", complete, err
	}
	return name, complete, nil
}

// recordHandshake is the content type of a TLS handshake record.
const recordHandshake = 0x16

// hostOf returns the Host of the HTTP request head at the start of b (as
// net/http reads it: the request line's absolute URL wins over the
// header), without its port. Only the first httpHeadMax bytes count, so
// that complete is true once they are there whatever follows.
func hostOf(b []byte) (string, bool) {
	head := b[:min(len(b), httpHeadMax)]
	end := bytes.Index(head, []byte("\r\n\r\n"))
	if end < 0 {
		return "", len(head) == httpHeadMax
	}
	req, err := http.ReadRequest(bufio.NewReader(bytes.NewReader(head[:end+4])))
	if err != nil {
		return "", true
	}
	host := req.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	return host, true
}

// sniOf returns the server name of the TLS ClientHello at the start of b:
// the first host_name of its server_name extension (RFC 6066, 3), read
// from the first record alone.
func sniOf(b []byte) (string, bool) {
	if len(b) < 5 {
		return "", false
	}
	recLen := int(binary.BigEndian.Uint16(b[3:5]))
	if recLen > maxRecord {
		return "", true // larger than any record a client may send: no name comes
	}
	if len(b) < 5+recLen {
		return "", false
	}
	p := b[5 : 5+recLen]
	skip := func(n int) bool {
		if len(p) < n {
			p = nil
			return false
		}
		p = p[n:]
		return true
	}
	vec := func(lenBytes int) bool {
		if len(p) < lenBytes {
			return false
		}
		n := 0
		for i := 0; i < lenBytes; i++ {
			n = n<<8 | int(p[i])
		}
		return skip(lenBytes + n)
	}
	// handshake header (4), version (2), random (32), session id, cipher
	// suites, compression methods, then extensions.
	if len(p) < 4 || p[0] != 1 || !skip(4+2+32) || !vec(1) || !vec(2) || !vec(1) || len(p) < 2 {
		return "", true
	}
	ext := p[2:]
	for len(ext) >= 4 {
		typ, n := binary.BigEndian.Uint16(ext[0:2]), int(binary.BigEndian.Uint16(ext[2:4]))
		if len(ext) < 4+n {
			break
		}
		body := ext[4 : 4+n]
		if typ == 0 && len(body) >= 5 && body[2] == 0 {
			l := int(binary.BigEndian.Uint16(body[3:5]))
			if len(body) >= 5+l {
				return string(body[5 : 5+l]), true
			}
		}
		ext = ext[4+n:]
	}
	return "", true
}
