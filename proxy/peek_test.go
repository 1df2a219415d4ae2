package proxy

import (
	"bytes"
	"crypto/tls"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// helloConn records what a TLS client writes and answers nothing.
type helloConn struct{ out bytes.Buffer }

func (c *helloConn) Read([]byte) (int, error)         { return 0, io.EOF }
func (c *helloConn) Write(b []byte) (int, error)      { return c.out.Write(b) }
func (c *helloConn) Close() error                     { return nil }
func (c *helloConn) LocalAddr() net.Addr              { return &net.TCPAddr{} }
func (c *helloConn) RemoteAddr() net.Addr             { return &net.TCPAddr{} }
func (c *helloConn) SetDeadline(time.Time) error      { return nil }
func (c *helloConn) SetReadDeadline(time.Time) error  { return nil }
func (c *helloConn) SetWriteDeadline(time.Time) error { return nil }

// clientHello is the first flight crypto/tls sends with cfg: a real
// ClientHello record.
func clientHello(t testing.TB, cfg *tls.Config) []byte {
	t.Helper()
	c := &helloConn{}
	tls.Client(c, cfg).Handshake() // fails at the missing answer
	if c.out.Len() < 5 || c.out.Bytes()[0] != recordHandshake {
		t.Fatalf("no ClientHello written: %x", c.out.Bytes())
	}
	return c.out.Bytes()
}

// The name a stream asks for, from a real ClientHello or an HTTP request
// head; nothing before the stream says enough, and no name the
// canonicaliser refuses.
func TestNameIn(t *testing.T) {
	sni := clientHello(t, &tls.Config{ServerName: "api.allowed.test"})
	tls12 := clientHello(t, &tls.Config{ServerName: "Old.Allowed.Test", MaxVersion: tls.VersionTLS12})
	noSNI := clientHello(t, &tls.Config{InsecureSkipVerify: true})
	for _, tc := range []struct {
		name, in, want string
		bad            bool // a name, but one the canonicaliser refuses
	}{
		{"TLS 1.3 ClientHello", string(sni), "api.allowed.test", false},
		{"TLS 1.2 ClientHello, as spelled", string(tls12), "Old.Allowed.Test", false},
		{"ClientHello without SNI", string(noSNI), "", false},
		{"SNI with a NUL", string(bytes.Replace(sni, []byte("api.allowed.test"), []byte("ap\x00.allowed.test"), 1)), "", true},
		{"HTTP Host with port", "GET /x HTTP/1.1\r\nHost: allowed.test:8080\r\n\r\n", "allowed.test", false},
		{"HTTP Host IPv6", "GET / HTTP/1.1\r\nHost: [2001:db8::1]:80\r\n\r\n", "2001:db8::1", false},
		{"absolute URL over Host, as net/http reads it", "GET http://url.test/ HTTP/1.1\r\nHost: header.test\r\n\r\n", "url.test", false},
		{"HTTP/1.0 without Host", "GET / HTTP/1.0\r\n\r\n", "", false},
		{"Host with '%'", "GET / HTTP/1.1\r\nHost: a%41.test\r\n\r\n", "", true},
		{"Host with a space", "GET / HTTP/1.1\r\nHost: a b.test\r\n\r\n", "", true},
		{"not HTTP", "SSH-2.0-OpenSSH\r\n\r\n", "", false},
	} {
		name, complete, err := nameIn([]byte(tc.in))
		if name != tc.want || !complete || (err != nil) != tc.bad {
			t.Errorf("%s: got %q complete %v err %v; want %q, malformed %v", tc.name, name, complete, err, tc.want, tc.bad)
		}
	}
	// Every proper prefix of a stream that names a host is incomplete:
	// the peek waits for the rest instead of deciding by the address.
	for _, s := range [][]byte{sni, []byte("GET /x HTTP/1.1\r\nHost: allowed.test\r\n\r\n")} {
		for n := 1; n < len(s); n++ {
			if name, complete, err := nameIn(s[:n]); complete || name != "" || err != nil {
				t.Fatalf("prefix %d of %q: %q complete %v err %v", n, s[:min(len(s), 8)], name, complete, err)
			}
		}
	}
	// A head past httpHeadMax without its end is given up on.
	if name, complete, _ := nameIn([]byte("GET / HTTP/1.1\r\nX: " + strings.Repeat("a", httpHeadMax))); name != "" || !complete {
		t.Errorf("oversized head: %q complete %v", name, complete)
	}
}

// peekName reads a ClientHello that arrives in pieces to its end, and
// hands on every byte it read.
func TestPeekName(t *testing.T) {
	hello := clientHello(t, &tls.Config{ServerName: "allowed.test"})
	client, server := net.Pipe()
	defer server.Close()
	go func() {
		client.Write(hello[:3])
		client.Write(hello[3:40])
		client.Write(hello[40:])
		// Not read by peekName: it stops at the end of the record.
		client.Write([]byte("after"))
		client.Close()
	}()
	name, head, err := peekName(server)
	if name != "allowed.test" || err != nil || !bytes.Equal(head, hello) {
		t.Errorf("got %q, %d bytes (want %d), %v", name, len(head), len(hello), err)
	}
	rest, _ := io.ReadAll(server)
	if string(rest) != "after" {
		t.Errorf("after the peek, the stream goes on with %q", rest)
	}

	// A client that sends nothing and closes has no name, and no error.
	client, server = net.Pipe()
	defer server.Close()
	client.Close()
	if name, head, err := peekName(server); name != "" || len(head) != 0 || err != nil {
		t.Errorf("empty stream: %q %q %v", name, head, err)
	}
}
