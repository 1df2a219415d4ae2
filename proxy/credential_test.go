package proxy

import (
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"strings"
	"testing"
	"time"
)

// With a credential (the fallback's proxies on host loopback), a client
// without it, or with a wrong one, reaches nothing: the upstream sees no
// connection. With it, the request goes through, and the credential is
// not passed on to the server.
func TestCredential(t *testing.T) {
	port, hits := upstream(t)
	target := fmt.Sprintf("127.0.0.1:%d", port)
	s := New(policy(t, []string{target}, nil, nil))
	cred, err := NewCredential()
	if err != nil {
		t.Fatal(err)
	}
	ha, sa := startFor(t, s, &Client{Credential: cred})
	basic := func(user, pw string) string {
		return "Proxy-Authorization: Basic " + base64.StdEncoding.EncodeToString([]byte(user+":"+pw)) + "\r\n"
	}
	for _, auth := range []string{"", basic(cred.User, "wrong"), basic("other", cred.Password), "Proxy-Authorization: Bearer " + cred.Password + "\r\n"} {
		for _, req := range []string{
			"CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n" + auth + "\r\n",
			"GET http://" + target + "/x HTTP/1.1\r\nHost: " + target + "\r\n" + auth + "\r\n",
		} {
			if out := rawHTTP(t, ha, req); !strings.HasPrefix(out, "HTTP/1.1 407 ") || !strings.Contains(out, "Proxy-Authenticate: Basic") {
				t.Errorf("%q: %q", req, out)
			}
		}
	}
	if n := hits(); n != 0 {
		t.Errorf("the upstream saw %d connections from unauthenticated clients", n)
	}
	out := rawHTTP(t, ha, "GET http://"+target+"/x HTTP/1.1\r\nHost: "+target+"\r\n"+basic(cred.User, cred.Password)+"\r\n")
	if !strings.Contains(out, "hello /x") {
		t.Errorf("authenticated request: %q", out)
	}

	// SOCKS5: "no authentication" is refused; a wrong password gets
	// status 1; the right one connects.
	socks := func(greeting []byte, login []byte) (reply []byte) {
		c, err := net.Dial("tcp", sa)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write(greeting)
		if login != nil {
			c.Write(login)
			c.Write([]byte{5, 1, 0, 1, 127, 0, 0, 1, byte(port >> 8), byte(port)})
		}
		out, _ := io.ReadAll(io.LimitReader(c, 6))
		return out
	}
	login := func(user, pw string) []byte {
		b := []byte{1, byte(len(user))}
		b = append(b, user...)
		b = append(b, byte(len(pw)))
		return append(b, pw...)
	}
	if got := socks([]byte{5, 1, 0}, nil); string(got) != "\x05\xff" {
		t.Errorf("no-auth greeting: %q", got)
	}
	if got := socks([]byte{5, 1, 2}, login(cred.User, "wrong")); string(got) != "\x05\x02\x01\x01" {
		t.Errorf("wrong password: %q", got)
	}
	if n := hits(); n != 1 {
		t.Errorf("the upstream saw %d connections, want the one authenticated request", n)
	}
	if got := socks([]byte{5, 2, 0, 2}, login(cred.User, cred.Password)); len(got) < 6 || string(got[:6]) != "\x05\x02\x01\x00\x05\x00" {
		t.Errorf("right password: %q", got)
	}
}
