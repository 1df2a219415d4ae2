package proxy

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/testenv"

	"github.com/srt-go/srt/netfilter"
)

// upstream is a loopback server: HTTP answers "hello <path>"; any other
// first byte makes it an echo server that replies after the client's EOF.
func upstream(t testing.TB) (port uint16, hits func() int) {
	t.Helper()
	count := make(chan struct{}, 100000)
	p := testenv.ServeTCP(t, func(c net.Conn) {
		count <- struct{}{}
		br := bufio.NewReader(c)
		first, err := br.Peek(1)
		if err != nil {
			return
		}
		if first[0] >= 'A' && first[0] <= 'Z' {
			req, err := http.ReadRequest(br)
			if err != nil {
				return
			}
			body := "hello " + req.URL.Path + " host=" + req.Host
			fmt.Fprintf(c, "HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			return
		}
		data, _ := io.ReadAll(br)
		c.Write(append([]byte("echo:"), data...))
	})
	return uint16(p), func() int { return len(count) }
}

func policy(t testing.TB, allowed, denied []string, reasons map[string]string) *netfilter.Policy {
	t.Helper()
	p, err := netfilter.NewPolicy(allowed, denied, reasons, nil)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// start serves both proxies on loopback and returns their addresses.
func start(t testing.TB, s *Server) (httpAddr, socksAddr string) { return startFor(t, s, nil) }

// startFor serves both proxies on loopback for client c.
func startFor(t testing.TB, s *Server, c *Client) (httpAddr, socksAddr string) {
	t.Helper()
	hl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	sl, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	go s.ServeHTTP(hl, c)
	go s.ServeSOCKS(sl, c)
	t.Cleanup(func() { s.Close() })
	return hl.Addr().String(), sl.Addr().String()
}

// fakeDNS resolves the test's names.
func fakeDNS(names map[string]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		a, ok := names[host]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		return []netip.Addr{netip.MustParseAddr(a)}, nil
	}
}

func rawHTTP(t *testing.T, addr, request string) string {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	io.WriteString(c, request)
	c.(*net.TCPConn).CloseWrite()
	out, _ := io.ReadAll(c)
	return string(out)
}

func TestHTTPProxy(t *testing.T) {
	port, hits := upstream(t)
	p := fmt.Sprint(port)
	s := New(policy(t, []string{"127.0.0.1:" + p, "allowed.test", "rebind.test"}, []string{"evil.test", "127.0.0.1:1"},
		map[string]string{"evil.test": "use <good.test> instead\x07 now"}))
	s.Resolve = fakeDNS(map[string]string{"allowed.test": "127.0.0.1", "rebind.test": "127.0.0.1", "evil.test": "127.0.0.1"})
	var decisions []Decision
	s.OnDecision = func(d Decision) { decisions = append(decisions, d) }
	h, _ := start(t, s)

	for _, tc := range []struct {
		name, request string
		want          []string
	}{
		{"allowed absolute-form", "GET http://127.0.0.1:" + p + "/x HTTP/1.1\r\nHost: 127.0.0.1:" + p + "\r\n\r\n", []string{"HTTP/1.1 200 OK", "hello /x host=127.0.0.1:" + p}},
		{"numeric spelling of an allowed address", "GET http://2130706433:" + p + "/y HTTP/1.1\r\nHost: 2130706433:" + p + "\r\n\r\n", []string{"200 OK", "hello /y"}},
		{"unlisted", "GET http://other.test/ HTTP/1.1\r\nHost: other.test\r\n\r\n", []string{"HTTP/1.1 403 Forbidden", "X-Proxy-Error: blocked-by-allowlist", "Connection blocked by network allowlist\n"}},
		{"Host header disagrees", "GET http://127.0.0.1:" + p + "/ HTTP/1.1\r\nHost: evil.test\r\n\r\n", []string{"HTTP/1.1 400", "does not name the request target"}},
		{"origin-form is no proxy request", "GET / HTTP/1.1\r\nHost: 127.0.0.1:" + p + "\r\n\r\n", []string{"HTTP/1.1 400"}},
		{"https in plain HTTP", "GET https://127.0.0.1:" + p + "/ HTTP/1.1\r\nHost: 127.0.0.1:" + p + "\r\n\r\n", []string{"HTTP/1.1 400"}},
		{"CONNECT denied with its reason", "CONNECT evil.test:443 HTTP/1.1\r\nHost: evil.test:443\r\n\r\n", []string{"HTTP/1.1 403 use good.test instead now\r\n", "X-Proxy-Error: blocked-by-allowlist"}},
		{"CONNECT unlisted", "CONNECT other.test:443 HTTP/1.1\r\n\r\n", []string{"HTTP/1.1 403 host is not on the allow list\r\n"}},
		{"CONNECT deny port rule", "CONNECT 127.0.0.1:1 HTTP/1.1\r\n\r\n", []string{"HTTP/1.1 403 host is on the deny list"}},
		{"CONNECT NUL", "CONNECT allowed.test\x00.evil:443 HTTP/1.1\r\n\r\n", []string{"HTTP/1.1 400"}},
		{"CONNECT bad port", "CONNECT allowed.test:0443 HTTP/1.1\r\n\r\n", []string{"HTTP/1.1 400"}},
		{"allowed name resolving to loopback", "CONNECT rebind.test:" + p + " HTTP/1.1\r\n\r\n", []string{"HTTP/1.1 200"}},
		{"allowed name resolving to loopback, other port", "CONNECT rebind.test:8443 HTTP/1.1\r\n\r\n", []string{"HTTP/1.1 403 resolved to a loopback address", "X-Proxy-Error: blocked-by-sandbox-runtime"}},
		{"unknown name", "CONNECT nosuch.allowed.test:443 HTTP/1.1\r\n\r\n", []string{"HTTP/1.1 403"}},
	} {
		got := rawHTTP(t, h, tc.request)
		for _, w := range tc.want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: response %q lacks %q", tc.name, got, w)
			}
		}
	}
	if hits() != 3 {
		t.Errorf("the upstream got %d connections, want 3 (only the allowed requests)", hits())
	}
	if len(decisions) == 0 || decisions[0].Host != "127.0.0.1" || !decisions[0].Allowed {
		t.Errorf("decisions not reported: %+v", decisions)
	}
}

func TestCONNECTTunnelHalfClose(t *testing.T) {
	port, _ := upstream(t)
	s := New(policy(t, []string{fmt.Sprintf("127.0.0.1:%d", port)}, nil, nil))
	h, _ := start(t, s)
	c, err := net.Dial("tcp", h)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	// The request and the first tunnel bytes in one write: the bytes read
	// ahead by the parser must still reach the upstream.
	fmt.Fprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\nping", port)
	c.(*net.TCPConn).CloseWrite()
	out, _ := io.ReadAll(c)
	if !strings.HasPrefix(string(out), "HTTP/1.1 200") || !strings.HasSuffix(string(out), "echo:ping") {
		t.Errorf("tunnel: %q", out)
	}
}

// socksConnect performs a SOCKS5 CONNECT and returns the reply code.
func socksConnect(t *testing.T, addr string, atyp byte, host []byte, port uint16) (byte, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte{5, 1, 0})
	var m [2]byte
	if _, err := io.ReadFull(c, m[:]); err != nil || m != [2]byte{5, 0} {
		t.Fatalf("greeting: %v %v", m, err)
	}
	req := []byte{5, 1, 0, atyp}
	if atyp == 3 {
		req = append(req, byte(len(host)))
	}
	req = append(req, host...)
	req = binary.BigEndian.AppendUint16(req, port)
	c.Write(req)
	var rep [10]byte
	if _, err := io.ReadFull(c, rep[:]); err != nil {
		c.Close()
		return 0xff, nil
	}
	return rep[1], c
}

func TestSOCKSProxy(t *testing.T) {
	port, hits := upstream(t)
	s := New(policy(t, []string{fmt.Sprintf("127.0.0.1:%d", port), fmt.Sprintf("[::1]:%d", port), "name.test"}, []string{"127.0.0.2", "127.0.0.3"}, nil))
	s.Resolve = fakeDNS(map[string]string{"name.test": "127.0.0.1"})
	_, sa := start(t, s)
	lo := []byte{127, 0, 0, 1}
	for _, tc := range []struct {
		name string
		atyp byte
		host []byte
		port uint16
		want byte
	}{
		{"IPv4 allowed", 1, lo, port, socksSucceeded},
		{"IPv4 other port", 1, lo, port + 1, socksNotAllowed},
		{"domain allowed, resolving to an allowed literal", 3, []byte("name.test"), port, socksSucceeded},
		{"domain numeric spelling", 3, []byte("2130706433"), port, socksSucceeded},
		{"domain with NUL", 3, []byte("name.test\x00evil"), port, socksNotAllowed},
		{"domain with %", 3, []byte("name.test%00"), port, socksNotAllowed},
		{"denied", 3, []byte("127.0.0.3"), 80, socksNotAllowed},
		{"denied, in hex", 3, []byte("0x7f.0.0.2"), 80, socksNotAllowed},
		{"denied, as IPv4", 1, []byte{127, 0, 0, 2}, 80, socksNotAllowed},
		{"unlisted", 3, []byte("other.test"), 443, socksNotAllowed},
		{"IPv4-mapped IPv6 of an allowed address", 4, netip.MustParseAddr("::ffff:127.0.0.1").AsSlice(), port, socksSucceeded},
	} {
		code, c := socksConnect(t, sa, tc.atyp, tc.host, tc.port)
		if code != tc.want {
			t.Errorf("%s: reply %d, want %d", tc.name, code, tc.want)
		}
		if c != nil {
			if code == socksSucceeded {
				c.Write([]byte("x"))
				c.(*net.TCPConn).CloseWrite()
				if out, _ := io.ReadAll(c); string(out) != "echo:x" {
					t.Errorf("%s: tunnel got %q", tc.name, out)
				}
			}
			c.Close()
		}
	}
	if hits() != 4 {
		t.Errorf("upstream hits %d, want 4", hits())
	}
	// IPv6 loopback, where the host has it.
	if l, err := net.Listen("tcp", "[::1]:0"); err == nil {
		l.Close()
		code, c := socksConnect(t, sa, 4, netip.IPv6Loopback().AsSlice(), port)
		if c != nil {
			c.Close()
		}
		if code != socksHostUnreachable && code != socksConnectionRefused && code != socksSucceeded {
			t.Errorf("IPv6 allowed: reply %d", code)
		}
	}
}

func TestPolicyUpdateAppliesToNextConnection(t *testing.T) {
	port, _ := upstream(t)
	s := New(policy(t, nil, nil, nil))
	h, _ := start(t, s)
	req := fmt.Sprintf("GET http://127.0.0.1:%d/ HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n", port, port)
	if got := rawHTTP(t, h, req); !strings.Contains(got, "403") {
		t.Fatalf("before: %q", got)
	}
	s.SetPolicy(policy(t, []string{fmt.Sprintf("127.0.0.1:%d", port)}, nil, nil))
	if got := rawHTTP(t, h, req); !strings.Contains(got, "200 OK") {
		t.Fatalf("after allow: %q", got)
	}
	s.SetPolicy(policy(t, []string{fmt.Sprintf("127.0.0.1:%d", port)}, []string{"127.0.0.1"}, nil))
	if got := rawHTTP(t, h, req); !strings.Contains(got, "403") {
		t.Fatalf("after deny: %q", got)
	}
}

func openFDs(t *testing.T) int {
	entries, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		t.Skip("requires /proc/self/fd")
	}
	return len(entries)
}

// Many connections, some dying mid-stream, leave no goroutine or fd behind.
func TestNoLeaks(t *testing.T) {
	port, _ := upstream(t)
	s := New(policy(t, []string{fmt.Sprintf("127.0.0.1:%d", port)}, nil, nil))
	h, sa := start(t, s)
	time.Sleep(50 * time.Millisecond)
	g0, f0 := runtime.NumGoroutine(), openFDs(t)
	for i := 0; i < 300; i++ {
		c, err := net.Dial("tcp", h)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(c, "CONNECT 127.0.0.1:%d HTTP/1.1\r\n\r\nabc", port)
		if i%3 == 0 {
			c.Close() // dies mid-stream
			continue
		}
		c.(*net.TCPConn).CloseWrite()
		io.ReadAll(c)
		c.Close()
		code, sc := socksConnect(t, sa, 1, []byte{127, 0, 0, 1}, port)
		if code == socksSucceeded {
			sc.(*net.TCPConn).SetLinger(0)
		}
		if sc != nil {
			sc.Close() // reset in the middle of the tunnel
		}
	}
	// Nor any count of a client's connections: a session runs many
	// commands, and each would stay.
	counted := func() (clients, conns int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		return len(s.clients), len(s.conns)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		g, f := runtime.NumGoroutine(), openFDs(t)
		clients, conns := counted()
		if g <= g0+2 && f <= f0+2 && clients == 0 && conns == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("goroutines %d -> %d, fds %d -> %d, %d clients and %d connections still counted", g0, g, f0, f, clients, conns)
		}
		time.Sleep(20 * time.Millisecond)
	}
	s.Close()
	s.Close()
}

func TestSanitizeReason(t *testing.T) {
	for in, want := range map[string]string{
		"use good.example.org instead <now>": "use good.example.org instead now",
		"a\x00\x01\x02b":                     "a b",
		"  spaced  ":                         "spaced",
		"":                                   "Forbidden",
		"<>":                                 "Forbidden",
		"héllo":                              "h?llo",
		"x\r\nInjected: 1":                   "x Injected: 1",
	} {
		if got := sanitizeReason(in); got != want {
			t.Errorf("sanitizeReason(%q) = %q, want %q", in, got, want)
		}
	}
	if got := sanitizeReason(strings.Repeat("a", 600)); len(got) != 500 {
		t.Errorf("length %d", len(got))
	}
}

// A tunnel on which nothing moves is closed after the idle timeout; one
// on which only one direction moves is not.
func TestIdleTimeout(t *testing.T) {
	port := uint16(testenv.ServeTCP(t, func(c net.Conn) { // sends a byte every 50 ms, never reads
		for i := 0; i < 12; i++ {
			if _, err := c.Write([]byte("t")); err != nil {
				return
			}
			time.Sleep(50 * time.Millisecond)
		}
		time.Sleep(5 * time.Second)
	}))
	s := New(policy(t, []string{fmt.Sprintf("127.0.0.1:%d", port)}, nil, nil))
	s.IdleTimeout = 200 * time.Millisecond
	_, sa := start(t, s)
	code, c := socksConnect(t, sa, 1, []byte{127, 0, 0, 1}, port)
	if code != socksSucceeded {
		t.Fatalf("reply %d", code)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	start := time.Now()
	got, _ := io.ReadAll(c) // ends when the proxy closes the idle tunnel
	elapsed := time.Since(start)
	if len(got) != 12 {
		t.Errorf("got %d bytes, want all 12: the one-way traffic kept the tunnel alive", len(got))
	}
	if elapsed < 600*time.Millisecond || elapsed > 3*time.Second {
		t.Errorf("tunnel closed after %v; want the idle timeout after the last byte", elapsed)
	}
}

// A denied or unlisted name is never looked up: no DNS query leaves for it,
// through either proxy.
func TestDeniedNamesAreNotResolved(t *testing.T) {
	s := New(policy(t, []string{"allowed.test"}, []string{"evil.test"}, nil))
	var asked []string
	s.Resolve = func(_ context.Context, host string) ([]netip.Addr, error) {
		asked = append(asked, host)
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	h, sa := start(t, s)
	rawHTTP(t, h, "CONNECT evil.test:443 HTTP/1.1\r\n\r\n")
	rawHTTP(t, h, "GET http://unlisted.test/ HTTP/1.1\r\nHost: unlisted.test\r\n\r\n")
	socksConnect(t, sa, 3, []byte("evil.test"), 443)
	socksConnect(t, sa, 3, []byte("x.evil.test.unlisted"), 80)
	rawHTTP(t, h, "CONNECT allowed.test:443 HTTP/1.1\r\n\r\n")
	if len(asked) != 1 || asked[0] != "allowed.test" {
		t.Errorf("resolver asked for %q, want only allowed.test", asked)
	}
}

// The SOCKS proxy knows CONNECT alone: any other command, the private
// one the DNS stub asked before it ran in the proxy's process (0xF0)
// included, is refused as unsupported, with nothing resolved or dialled.
func TestSOCKSOnlyConnect(t *testing.T) {
	s := New(policy(t, []string{"allowed.test"}, nil, nil))
	resolved := 0
	s.Resolve = func(context.Context, string) ([]netip.Addr, error) { resolved++; return nil, nil }
	var decided []Decision
	s.OnDecision = func(d Decision) { decided = append(decided, d) }
	_, sa := start(t, s)
	for _, cmd := range []byte{2, 3, 0xf0} {
		c, err := net.Dial("tcp", sa)
		if err != nil {
			t.Fatal(err)
		}
		c.SetDeadline(time.Now().Add(5 * time.Second))
		c.Write(append([]byte{5, 1, 0, 5, cmd, 0, 3, 12}, "allowed.test\x01\xbb"...))
		var rep [12]byte
		n, _ := io.ReadFull(c, rep[:])
		c.Close()
		if n < 4 || rep[3] != socksCommandUnsupported {
			t.Errorf("command %#x: reply %x", cmd, rep[:n])
		}
	}
	if resolved != 0 || len(decided) != 0 {
		t.Errorf("resolved %d names, decided %+v", resolved, decided)
	}
}

// connectHTTP asks the HTTP proxy at addr for a tunnel to target and
// returns the response head; on a 200 the connection is the tunnel, on
// anything else it is closed and the head has the body appended.
func connectHTTP(t testing.TB, addr, target string) (string, net.Conn) {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	c.SetDeadline(time.Now().Add(5 * time.Second))
	fmt.Fprintf(c, "CONNECT %s HTTP/1.1\r\nHost: %s\r\n\r\n", target, target)
	head, err := readHead(c)
	if err != nil {
		c.Close()
		return "error: " + err.Error(), nil
	}
	if !strings.HasPrefix(head, "HTTP/1.1 200 ") {
		body, _ := io.ReadAll(c)
		c.Close()
		return head + string(body), nil
	}
	c.SetDeadline(time.Time{})
	return head, c
}

// readHead reads up to the blank line that ends a response head, and no
// further: the tunnel's bytes stay unread.
func readHead(c net.Conn) (string, error) {
	var b []byte
	var one [1]byte
	for !strings.HasSuffix(string(b), "\r\n\r\n") {
		if _, err := c.Read(one[:]); err != nil {
			return string(b), err
		}
		b = append(b, one[0])
	}
	return string(b), nil
}

// echoes checks that c is a working tunnel to the upstream echo server.
func echoes(t testing.TB, c net.Conn) bool {
	t.Helper()
	c.SetDeadline(time.Now().Add(5 * time.Second))
	c.Write([]byte("ping"))
	c.(*net.TCPConn).CloseWrite()
	out, _ := io.ReadAll(c)
	return string(out) == "echo:ping"
}
