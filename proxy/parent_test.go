package proxy

import (
	"bufio"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/srt-go/srt/internal/testenv"
)

// fakeParent is a CONNECT proxy that records what it was asked for.
func fakeParent(t *testing.T) (addr string, asked func() []string) {
	var mu sync.Mutex
	var seen []string
	port := testenv.ServeTCP(t, func(c net.Conn) {
		br := bufio.NewReader(c)
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		mu.Lock()
		seen = append(seen, req.RequestURI+" auth="+req.Header.Get("Proxy-Authorization"))
		mu.Unlock()
		up, err := net.Dial("tcp", req.RequestURI)
		if err != nil {
			io.WriteString(c, "HTTP/1.1 502 Bad Gateway\r\n\r\n")
			return
		}
		io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\n")
		relay(c, up, 0)
	})
	return fmt.Sprintf("127.0.0.1:%d", port), func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

func TestParentProxy(t *testing.T) {
	port, _ := upstream(t)
	paddr, asked := fakeParent(t)
	parent, err := ParseParent("", "http://user:pw@"+paddr, "bypass.test,10.0.0.0/8")
	if err != nil {
		t.Fatal(err)
	}
	if parent.HTTP != nil || parent.HTTPS == nil {
		t.Fatalf("parent %+v", parent)
	}
	s := New(policy(t, []string{"allowed.test", fmt.Sprintf("127.0.0.1:%d", port)}, nil, nil))
	s.Parent = parent
	h, _ := start(t, s)
	// Allowed: tunnelled through the parent, by name, with its credentials.
	got := rawHTTP(t, h, "CONNECT allowed.test:443 HTTP/1.1\r\n\r\n")
	if !strings.Contains(got, "HTTP/1.1 502") { // the fake parent cannot reach allowed.test
		t.Errorf("CONNECT through the parent: %q", got)
	}
	// Denied: the parent is never asked.
	rawHTTP(t, h, "CONNECT denied.test:443 HTTP/1.1\r\n\r\n")
	// Loopback bypasses the parent.
	got = rawHTTP(t, h, fmt.Sprintf("CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\nping", port))
	if !strings.HasSuffix(got, "echo:ping") {
		t.Errorf("loopback: %q", got)
	}
	a := asked()
	if len(a) != 1 || a[0] != "allowed.test:443 auth=Basic dXNlcjpwdw==" {
		t.Errorf("the parent was asked %q", a)
	}
	for host, want := range map[string]bool{"bypass.test": true, "a.bypass.test": true, "10.1.2.3": true, "localhost": true, "127.0.0.5": true, "other.test": false, "notbypass.test": false} {
		if got := parent.bypass(host); got != want {
			t.Errorf("bypass(%q) = %v", host, got)
		}
	}
	if p, err := ParseParent("", "", ""); p != nil || err != nil {
		t.Errorf("no parent: %v %v", p, err)
	}
	if _, err := ParseParent("socks5://x:1", "", ""); err == nil {
		t.Error("a socks parent is accepted")
	}
	if p, _ := ParseParent("proxy.corp:3128", "", "*"); p.HTTP.Host != "proxy.corp:3128" || !p.bypass("anything.test") {
		t.Errorf("schemeless: %+v", p)
	}
}
