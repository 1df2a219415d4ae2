package proxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/srt-go/srt/internal/testenv"
	"github.com/srt-go/srt/netfilter"
)

// tlsUpstream is an HTTPS server (HTTP/1.1 and HTTP/2) for example.com and
// 127.0.0.1 whose CA only the proxy under test trusts. It answers with
// what it received.
func tlsUpstream(t testing.TB) (port string, roots *x509.CertPool) {
	t.Helper()
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		w.Header().Set("X-Upstream-Secret", "s3")
		w.Header().Set("X-Kept", "k")
		w.Header().Set("X-Path", r.URL.RequestURI())
		w.Header().Set("X-Got-Set", strings.Join(r.Header.Values("X-Set"), ","))
		w.Header().Set("X-Got-Removed", r.Header.Get("X-Remove"))
		fmt.Fprintf(w, "proto=%s host=%s auth=%s body=%s", r.Proto, r.Host, r.Header.Get("Authorization"), body)
	}))
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	roots = x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return port, roots
}

// injectAuth is an Injector that sets Authorization, and records where
// it was asked to act.
type injectAuth struct {
	mu    sync.Mutex
	asked []string
}

func (ia *injectAuth) inject(h netfilter.Host, isTLS bool) Injector {
	ia.mu.Lock()
	ia.asked = append(ia.asked, fmt.Sprintf("%s tls=%v", h, isTLS))
	ia.mu.Unlock()
	return injectorFunc(func(r *http.Request) error {
		if r.Header.Get("Authorization") == "Bearer refuse" {
			return &StatusError{Status: 403, Reason: "refused by the test"}
		}
		r.Header.Set("Authorization", strings.ReplaceAll(r.Header.Get("Authorization"), "SENTINEL", "real"))
		return nil
	})
}

type injectorFunc func(*http.Request) error

func (f injectorFunc) Request(r *http.Request) error  { return f(r) }
func (injectorFunc) Response(*http.Response) error    { return nil }
func (injectorFunc) ResponseHeader(http.Header) error { return nil }

// terminating is a server that terminates TLS to example.com, which
// resolves to the loopback upstream.
func terminating(t testing.TB, in *Inspection, inject ...func(netfilter.Host, bool) Injector) (s *Server, httpAddr, socksAddr string, ca *x509.CertPool, port string) {
	t.Helper()
	port, roots := tlsUpstream(t)
	c, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	in.CA, in.RootCAs = c, roots
	s = New(policy(t, []string{"example.com", "127.0.0.1", "other.example"}, nil, nil))
	s.Resolve = fakeDNS(map[string]string{"example.com": "127.0.0.1", "other.example": "127.0.0.1"})
	s.SetInspection(in)
	cl := &Client{ID: "cmd"}
	if len(inject) > 0 {
		cl.Inject = inject[0]
	}
	httpAddr, socksAddr = startFor(t, s, cl)
	ca = x509.NewCertPool()
	ca.AddCert(c.Certificate())
	return s, httpAddr, socksAddr, ca, port
}

func client(proxyURL string, roots *x509.CertPool, h2 bool) *http.Client {
	u, _ := url.Parse(proxyURL)
	tr := &http.Transport{Proxy: http.ProxyURL(u), TLSClientConfig: &tls.Config{RootCAs: roots}, ForceAttemptHTTP2: h2, DisableKeepAlives: false}
	if h2 {
		// As gRPC does: HTTP/2 only (a client that offers both gets
		// HTTP/1.1).
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP2(true)
	} else {
		tr.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
	}
	return &http.Client{Transport: tr, Timeout: 10 * time.Second}
}

func get(t *testing.T, c *http.Client, u string, auth string) (*http.Response, string) {
	t.Helper()
	req, _ := http.NewRequest("POST", u, strings.NewReader("payload"))
	if auth != "" {
		req.Header.Set("Authorization", auth)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatalf("%s: %v", u, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp, string(b)
}

func TestTerminateTLS(t *testing.T) {
	ia := &injectAuth{}
	_, httpAddr, socksAddr, ca, port := terminating(t, &Inspection{StripResponseHeaders: []string{"x-upstream-SECRET"}}, ia.inject)
	for _, tc := range []struct {
		name, proxy string
		h2          bool
	}{
		{"connect-h1", "http://" + httpAddr, false},
		{"connect-h2", "http://" + httpAddr, true},
		{"socks-h2", "socks5://" + socksAddr, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := client(tc.proxy, ca, tc.h2)
			resp, body := get(t, c, "https://example.com:"+port+"/x", "Bearer SENTINEL")
			// Upstream speaks what the command spoke.
			proto := "HTTP/1.1"
			if tc.h2 {
				proto = "HTTP/2.0"
			}
			want := "proto=" + proto + " host=example.com:" + port + " auth=Bearer real body=payload"
			if body != want {
				t.Errorf("upstream saw %q, want %q", body, want)
			}
			if tc.h2 != (resp.ProtoMajor == 2) {
				t.Errorf("the command's side spoke %s", resp.Proto)
			}
			if resp.TLS == nil || resp.TLS.PeerCertificates[0].Issuer.CommonName != "srt sandbox TLS inspection (ephemeral)" {
				t.Errorf("the command was not shown a leaf of srt's CA")
			}
			if resp.Header.Get("X-Upstream-Secret") != "" || resp.Header.Get("X-Kept") != "k" {
				t.Errorf("stripResponseHeaders: got %v", resp.Header)
			}
			// The injector may refuse.
			resp, _ = get(t, c, "https://example.com:"+port+"/x", "Bearer refuse")
			if resp.StatusCode != 403 {
				t.Errorf("a refused request got %d", resp.StatusCode)
			}
		})
	}
	ia.mu.Lock()
	defer ia.mu.Unlock()
	for _, a := range ia.asked {
		if a != "example.com tls=true" {
			t.Errorf("the injector was asked for %q", a)
		}
	}
}

// An upstream the host's roots (here: the test's) do not vouch for is not
// reached: the command gets 502, not a tunnel to an impostor.
func TestTerminateVerifiesUpstream(t *testing.T) {
	_, httpAddr, _, ca, port := terminating(t, &Inspection{})
	// other.example resolves to the upstream, whose certificate does not
	// name it.
	resp, _ := get(t, client("http://"+httpAddr, ca, false), "https://other.example:"+port+"/", "")
	if resp.StatusCode != http.StatusBadGateway {
		t.Errorf("an unverified upstream got %d, want 502", resp.StatusCode)
	}
}

func TestTerminateRequireHostMatch(t *testing.T) {
	_, httpAddr, _, ca, port := terminating(t, &Inspection{RequireHostMatch: true})
	c := client("http://"+httpAddr, ca, false)
	req, _ := http.NewRequest("GET", "https://example.com:"+port+"/", nil)
	req.Host = "other.example"
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMisdirectedRequest {
		t.Errorf("a Host that is not the CONNECT target got %d, want 421", resp.StatusCode)
	}
	if resp, _ := get(t, c, "https://example.com:"+port+"/", ""); resp.StatusCode != 200 {
		t.Errorf("a matching Host got %d", resp.StatusCode)
	}
	// Without the setting, the same request goes through.
	_, httpAddr, _, ca, port = terminating(t, &Inspection{})
	c = client("http://"+httpAddr, ca, false)
	req, _ = http.NewRequest("GET", "https://example.com:"+port+"/", nil)
	req.Host = "other.example"
	resp, err = c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Errorf("without requireHostMatch: %d", resp.StatusCode)
	}
}

func TestTerminateMaxTunnels(t *testing.T) {
	var mu sync.Mutex
	var reasons []string
	s, httpAddr, _, ca, port := terminating(t, &Inspection{MaxTunnels: 1})
	s.OnDecision = func(d Decision) {
		mu.Lock()
		defer mu.Unlock()
		if !d.Allowed {
			reasons = append(reasons, d.Reason)
		}
	}
	// The first tunnel stays open (keep-alive).
	c1 := client("http://"+httpAddr, ca, false)
	if resp, _ := get(t, c1, "https://example.com:"+port+"/", ""); resp.StatusCode != 200 {
		t.Fatalf("first tunnel: %d", resp.StatusCode)
	}
	for range 2 {
		head, conn := connectHTTP(t, httpAddr, "example.com:"+port)
		closeConn(conn)
		if !strings.HasPrefix(head, "HTTP/1.1 503") || !strings.Contains(head, "X-Proxy-Error: too-many-tunnels") {
			t.Errorf("a tunnel past maxTunnels got %q", head)
		}
	}
	mu.Lock()
	if len(reasons) != 1 {
		t.Errorf("the cap was reported %d times, want once: %q", len(reasons), reasons)
	}
	mu.Unlock()
	c1.CloseIdleConnections()
	waitSlot(t, httpAddr, "example.com:"+port, 5*time.Second, "the slot of a closed tunnel was not given back")
}

// waitSlot waits until a CONNECT to target is answered 200: a tunnel's
// slot was given back.
func waitSlot(t *testing.T, httpAddr, target string, within time.Duration, why string) {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		head, conn := connectHTTP(t, httpAddr, target)
		closeConn(conn)
		if strings.HasPrefix(head, "HTTP/1.1 200") {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: %q", why, head)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func TestTerminateRefuseOpaque(t *testing.T) {
	s, httpAddr, socksAddr, _, port := terminating(t, &Inspection{RefuseOpaque: true,
		Exclude: []netfilter.Pattern{mustPattern(t, "other.example")}})
	var mu sync.Mutex
	var denied []string
	s.OnDecision = func(d Decision) {
		mu.Lock()
		defer mu.Unlock()
		if !d.Allowed {
			denied = append(denied, d.Protocol+" "+d.Host)
		}
	}
	// Bytes that are not TLS after the CONNECT: closed, nothing relayed.
	head, conn := connectHTTP(t, httpAddr, "example.com:"+port)
	if !strings.HasPrefix(head, "HTTP/1.1 200") {
		t.Fatalf("CONNECT: %q", head)
	}
	conn.Write([]byte("GET / HTTP/1.1\r\nHost: example.com\r\n\r\n"))
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _ := bufio.NewReader(conn).Read(make([]byte, 10)); n != 0 {
		t.Errorf("a non-TLS tunnel was relayed")
	}
	conn.Close()
	// An excluded host cannot be inspected: refused up front.
	head, conn = connectHTTP(t, httpAddr, "other.example:"+port)
	closeConn(conn)
	if !strings.HasPrefix(head, "HTTP/1.1 403") || !strings.Contains(head, "blocked-by-sandbox-runtime") {
		t.Errorf("CONNECT to an excluded host got %q", head)
	}
	code, sc := socksConnect(t, socksAddr, 3, []byte("other.example"), portOf(t, port))
	if sc != nil {
		sc.Close()
	}
	if code != socksGeneralFailure {
		t.Errorf("SOCKS to an excluded host got %d", code)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(denied) != 3 {
		t.Errorf("refusals reported: %q", denied)
	}
}

func mustPattern(t testing.TB, s string) netfilter.Pattern {
	p, err := netfilter.ParsePattern(s, netfilter.HostOnly)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func portOf(t testing.TB, s string) uint16 {
	var p uint16
	if _, err := fmt.Sscan(s, &p); err != nil {
		t.Fatal(err)
	}
	return p
}

func closeConn(c net.Conn) {
	if c != nil {
		c.Close()
	}
}

// Plain HTTP proxy requests, with inspection on, are read by the
// inspecting server: each request on a kept-alive connection is decided
// for its own target, response headers are stripped, and the injector
// is asked with tls=false.
func TestInspectPlainHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X_Upstream.Secret", "s3")
		fmt.Fprintf(w, "host=%s auth=%s", r.Host, r.Header.Get("Authorization"))
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	s := New(policy(t, []string{"example.com", "127.0.0.1"}, nil, nil))
	s.Resolve = fakeDNS(map[string]string{"example.com": "127.0.0.1"})
	s.SetInspection(&Inspection{StripResponseHeaders: []string{"x-upstream-secret"}})
	ia := &injectAuth{}
	httpAddr, _ := startFor(t, s, &Client{ID: "cmd", Inject: ia.inject})
	c, err := net.Dial("tcp", httpAddr)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	c.SetDeadline(time.Now().Add(10 * time.Second))
	br := bufio.NewReader(c)
	ask := func(target string) *http.Response {
		fmt.Fprintf(c, "GET http://%s/ HTTP/1.1\r\nHost: %s\r\nAuthorization: Bearer SENTINEL\r\n\r\n", target, target)
		resp, err := http.ReadResponse(br, nil)
		if err != nil {
			t.Fatalf("%s: %v", target, err)
		}
		return resp
	}
	resp := ask("example.com:" + port)
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || string(body) != "host=example.com:"+port+" auth=Bearer real" {
		t.Errorf("first request: %d %q", resp.StatusCode, body)
	}
	if resp.Header.Get("X_Upstream.Secret") != "" {
		t.Errorf("a stripped header came through: %v", resp.Header)
	}
	// The same connection, another target: decided on its own.
	resp = ask("evil.test:" + port)
	io.ReadAll(resp.Body)
	if resp.StatusCode != 403 {
		t.Errorf("a denied target on a kept-alive connection got %d", resp.StatusCode)
	}
	ia.mu.Lock()
	defer ia.mu.Unlock()
	if len(ia.asked) != 1 || ia.asked[0] != "example.com tls=false" {
		t.Errorf("the injector was asked %q", ia.asked)
	}
}

// network.mitmProxy: an allowed connection to one of its hosts goes over
// its Unix socket as a CONNECT, and nowhere else; other hosts do not.
func TestMITMProxy(t *testing.T) {
	port, _ := upstream(t)
	sock := filepath.Join(testenv.ShortTempDir(t, "srt-mitm-"), "mitm.sock")
	asked := make(chan string, 4)
	testenv.Serve(t, "unix", sock, func(c net.Conn) {
		req, err := http.ReadRequest(bufio.NewReader(c))
		if err != nil {
			return
		}
		asked <- req.Method + " " + req.RequestURI
		io.WriteString(c, "HTTP/1.1 200 OK\r\n\r\nfrom-mitm")
	})
	s := New(policy(t, []string{"mitm.example", "127.0.0.1"}, nil, nil))
	s.SetMITM(&MITM{SocketPath: sock, Domains: []netfilter.Pattern{mustPattern(t, "mitm.example")}})
	httpAddr, _ := start(t, s)
	head, c := connectHTTP(t, httpAddr, "MITM.example:443")
	if c == nil {
		t.Fatalf("CONNECT: %q", head)
	}
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	got, _ := io.ReadAll(io.LimitReader(c, 9))
	c.Close()
	if string(got) != "from-mitm" || <-asked != "CONNECT mitm.example:443" {
		t.Errorf("the tunnel was %q", got)
	}
	head, c = connectHTTP(t, httpAddr, fmt.Sprintf("127.0.0.1:%d", port))
	if c == nil || !echoes(t, c) {
		t.Errorf("another host: %q", head)
	}
	select {
	case a := <-asked:
		t.Errorf("the MITM proxy was asked for %q", a)
	default:
	}
	// A MITM proxy that is not there: refused, nothing else tried.
	s.SetMITM(&MITM{SocketPath: sock + ".gone", Domains: []netfilter.Pattern{mustPattern(t, "mitm.example")}})
	if head, _ := connectHTTP(t, httpAddr, "mitm.example:443"); !strings.HasPrefix(head, "HTTP/1.1 502") {
		t.Errorf("with the socket gone: %q", head)
	}
}

func TestRequestFilter(t *testing.T) {
	var mu sync.Mutex
	var infos []RequestInfo
	var seen http.Header
	filter := func(r *http.Request, info RequestInfo) FilterDecision {
		mu.Lock()
		infos = append(infos, info)
		mu.Unlock()
		switch r.URL.Path {
		case "/deny":
			return FilterDecision{Deny: true, Status: 451, Reason: "not here"}
		case "/panic":
			panic("boom")
		case "/bad":
			return FilterDecision{SetHeaders: [][2]string{{"X-Set", "a\r\nInjected: 1"}}}
		}
		return FilterDecision{RemoveHeaders: []string{"x_remove"}, SetHeaders: [][2]string{{"X-Set", "one"}, {"x-set", "two"}, {"Content-Length", "1"}},
			OnResponse: func(status int, h http.Header) {
				mu.Lock()
				seen = h
				mu.Unlock()
			}}
	}
	s, httpAddr, _, ca, port := terminating(t, &Inspection{StripResponseHeaders: []string{"X-Upstream-Secret"}})
	s.Filter = filter
	var refused []string
	s.OnDecision = func(d Decision) {
		mu.Lock()
		defer mu.Unlock()
		if !d.Allowed {
			refused = append(refused, d.Protocol+" "+d.Host+" ("+d.Reason+")")
		}
	}
	c := client("http://"+httpAddr, ca, true)
	do := func(method, path string) *http.Response {
		req, _ := http.NewRequest(method, "https://example.com:"+port+path, nil)
		req.Header.Set("X-Remove", "r")
		resp, err := c.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp
	}
	resp := do("GET", "/ok?q=1")
	if resp.StatusCode != 200 || resp.Header.Get("X-Got-Set") != "one,two" || resp.Header.Get("X-Got-Removed") != "" || resp.Header.Get("X-Path") != "/ok?q=1" {
		t.Errorf("allowed with edits: %d %v", resp.StatusCode, resp.Header)
	}
	mu.Lock()
	if seen.Get("X-Upstream-Secret") != "s3" || resp.Header.Get("X-Upstream-Secret") != "" {
		t.Errorf("onResponse saw %v; the command saw %v", seen, resp.Header)
	}
	if len(infos) != 1 || infos[0].Scheme != "https" || infos[0].Host != "example.com" || infos[0].SNI != "example.com" || infos[0].ClientID != "cmd" {
		t.Errorf("info: %+v", infos)
	}
	mu.Unlock()
	for _, tc := range []struct {
		method, path string
		status       int
	}{{"GET", "/deny", 451}, {"GET", "/panic", 403}, {"GET", "/bad", 403}, {"TRACE", "/x", 405}} {
		c := client("http://"+httpAddr, ca, false)
		req, _ := http.NewRequest(tc.method, "https://example.com:"+port+tc.path, nil)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tc.status {
			t.Errorf("%s %s: %d, want %d", tc.method, tc.path, resp.StatusCode, tc.status)
		}
	}
	mu.Lock()
	if len(refused) != 4 || !strings.HasPrefix(refused[0], "http-request GET https://example.com:"+port+"/deny (not here)") {
		t.Errorf("refusals reported: %q", refused)
	}
	mu.Unlock()
}

func TestAmbiguousTarget(t *testing.T) {
	for _, tc := range []struct {
		mode, want string
		status     int
	}{{"", "", 400}, {TargetAsSpelled, "/a/../b", 200}, {TargetNormalize, "/b", 200}} {
		s, httpAddr, _, ca, port := terminating(t, &Inspection{AmbiguousTarget: tc.mode})
		s.Filter = func(*http.Request, RequestInfo) FilterDecision { return FilterDecision{} }
		head, conn := connectHTTP(t, httpAddr, "example.com:"+port)
		if conn == nil {
			t.Fatal(head)
		}
		tc2 := tls.Client(conn, &tls.Config{RootCAs: ca, ServerName: "example.com"})
		fmt.Fprintf(tc2, "GET /a/../b HTTP/1.1\r\nHost: example.com:%s\r\n\r\n", port)
		resp, err := http.ReadResponse(bufio.NewReader(tc2), nil)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		tc2.Close()
		if resp.StatusCode != tc.status || resp.Header.Get("X-Path") != tc.want {
			t.Errorf("mode %q: %d, upstream path %q", tc.mode, resp.StatusCode, resp.Header.Get("X-Path"))
		}
	}
}

func TestAsk(t *testing.T) {
	port, hits := upstream(t)
	s := New(policy(t, []string{"127.0.0.1"}, []string{"denied.example"}, nil))
	s.Resolve = fakeDNS(map[string]string{"ask.example": "127.0.0.1", "no.example": "127.0.0.1", "denied.example": "127.0.0.1"})
	var mu sync.Mutex
	var asked []string
	s.Ask = func(c *Client, host string, p uint16) (bool, string, error) {
		mu.Lock()
		asked = append(asked, host)
		mu.Unlock()
		switch host {
		case "ask.example":
			return true, "", nil
		case "no.example":
			return false, "not <today>\n", nil
		}
		return false, "", fmt.Errorf("prompt broke")
	}
	httpAddr, _ := start(t, s)
	for _, tc := range []struct{ host, want string }{
		{"ask.example", "HTTP/1.1 200"},
		{"no.example", "HTTP/1.1 403 not today"},
		{"err.example", "HTTP/1.1 403 permission prompt failed"},
		{"denied.example", "HTTP/1.1 403 host is on the deny list"},
	} {
		head, c := connectHTTP(t, httpAddr, fmt.Sprintf("%s:%d", tc.host, port))
		closeConn(c)
		if !strings.HasPrefix(head, tc.want) {
			t.Errorf("%s: %q, want %q", tc.host, head, tc.want)
		}
	}
	mu.Lock()
	if strings.Join(asked, " ") != "ask.example no.example err.example" {
		t.Errorf("asked about %q", asked)
	}
	mu.Unlock()
	if hits() != 1 {
		t.Errorf("the upstream saw %d connections, want the one allowed", hits())
	}
	// Under a strict allowlist nothing is asked.
	strict := policy(t, []string{"127.0.0.1"}, nil, nil)
	strict.Strict = true
	s.SetPolicy(strict)
	if head, c := connectHTTP(t, httpAddr, fmt.Sprintf("ask.example:%d", port)); !strings.HasPrefix(head, "HTTP/1.1 403") {
		closeConn(c)
		t.Errorf("strictAllowlist: %q", head)
	}
}

// A command that starts a ClientHello and stalls is dropped at the
// handshake deadline, and gives its tunnel slot back.
func TestTerminateHandshakeTimeout(t *testing.T) {
	_, httpAddr, _, _, port := terminating(t, &Inspection{HandshakeTimeout: 300 * time.Millisecond, MaxTunnels: 1})
	head, c := connectHTTP(t, httpAddr, "example.com:"+port)
	if c == nil {
		t.Fatal(head)
	}
	c.Write([]byte{0x16, 0x03})
	start := time.Now()
	c.SetReadDeadline(time.Now().Add(5 * time.Second))
	n, _ := c.Read(make([]byte, 1))
	if took := time.Since(start); n != 0 || took > 3*time.Second {
		t.Errorf("a stalled handshake: %d bytes, closed after %v", n, took)
	}
	c.Close()
	waitSlot(t, httpAddr, "example.com:"+port, 3*time.Second, "the stalled tunnel's slot was not given back")
}

// A WebSocket upgrade inside a terminated tunnel passes, and the bytes
// after it flow both ways.
func TestTerminateWebSocket(t *testing.T) {
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Upgrade") != "websocket" {
			http.Error(w, "no upgrade", 400)
			return
		}
		c, rw, err := http.NewResponseController(w).Hijack()
		if err != nil {
			return
		}
		defer c.Close()
		rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n")
		rw.Flush()
		line, _ := rw.ReadString('\n')
		rw.WriteString("echo " + line)
		rw.Flush()
	}))
	srv.StartTLS()
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	c, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	s := New(policy(t, []string{"example.com", "127.0.0.1"}, nil, nil))
	s.Resolve = fakeDNS(map[string]string{"example.com": "127.0.0.1"})
	s.SetInspection(&Inspection{CA: c, RootCAs: roots})
	httpAddr, _ := start(t, s)
	ca := x509.NewCertPool()
	ca.AddCert(c.Certificate())
	head, conn := connectHTTP(t, httpAddr, "example.com:"+port)
	if conn == nil {
		t.Fatal(head)
	}
	tc := tls.Client(conn, &tls.Config{RootCAs: ca, ServerName: "example.com", NextProtos: []string{"http/1.1"}})
	tc.SetDeadline(time.Now().Add(10 * time.Second))
	fmt.Fprintf(tc, "GET /ws HTTP/1.1\r\nHost: example.com:%s\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n", port)
	br := bufio.NewReader(tc)
	resp, err := http.ReadResponse(br, nil)
	if err != nil || resp.StatusCode != 101 {
		t.Fatalf("upgrade: %v %v", resp, err)
	}
	io.WriteString(tc, "ping\n")
	if line, _ := br.ReadString('\n'); line != "echo ping\n" {
		t.Errorf("after the upgrade: %q", line)
	}
	tc.Close()
}

// The transparent path's plain HTTP is read by the inspecting server:
// response headers are stripped there too.
func TestTransparentPlainHTTPInspected(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Set-Cookie", "s=1")
		fmt.Fprintf(w, "host=%s", r.Host)
	}))
	defer srv.Close()
	dst := netip.MustParseAddrPort(srv.Listener.Addr().String())
	s := New(policy(t, []string{"127.0.0.1"}, nil, nil))
	s.SetInspection(&Inspection{StripResponseHeaders: []string{"set-cookie"}})
	c := &Client{ID: "cmd"}
	sb := newSandbox(t, func(tr Transparent, d dstFunc) { s.serveTransparent(c, tr, d) })
	t.Cleanup(func() { s.Close() })
	conn := sb.dial(t, dst)
	fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n\r\n", dst)
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	if resp.Header.Get("Set-Cookie") != "" || string(body) != "host="+dst.String() {
		t.Errorf("transparent plain HTTP: %v %q", resp.Header, body)
	}
}

// What the second attack round found. A program that ignores the proxy
// variables reaches an allowed name by its fake address: its plain HTTP
// is read by the inspecting server all the same (requireHostMatch,
// stripResponseHeaders), not relayed as it is.
func TestTransparentFakeAddressInspected(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("X-Secret", "leak")
		fmt.Fprintf(w, "host=%s", r.Host)
	}))
	defer srv.Close()
	port := netip.MustParseAddrPort(srv.Listener.Addr().String()).Port()
	for _, match := range []bool{false, true} {
		s := New(policy(t, []string{"allowed.test", "127.0.0.1"}, nil, nil))
		s.Resolve = fakeDNS(map[string]string{"allowed.test": "127.0.0.1"})
		s.SetInspection(&Inspection{StripResponseHeaders: []string{"x-secret"}, RequireHostMatch: match})
		c := &Client{ID: "cmd"}
		sb := newSandbox(t, func(tr Transparent, d dstFunc) { s.serveTransparent(c, tr, d) })
		t.Cleanup(func() { s.Close() })
		fake, _ := sb.resolve(t, "udp", "allowed.test")
		conn := sb.dial(t, netip.AddrPortFrom(fake, port))
		fmt.Fprintf(conn, "GET / HTTP/1.1\r\nHost: evil.example\r\nConnection: close\r\n\r\n")
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		switch {
		case match && resp.StatusCode != http.StatusMisdirectedRequest:
			t.Errorf("requireHostMatch: %d %q", resp.StatusCode, body)
		case !match && (resp.Header.Get("X-Secret") != "" || string(body) != fmt.Sprintf("host=allowed.test:%d", port)):
			t.Errorf("the fake address's plain HTTP went unread: %v %q", resp.Header, body)
		}
	}
}

// The streams of one terminated HTTP/2 tunnel to an HTTP/1.1 origin each
// take an upstream connection: they count against the command's cap, so
// a few tunnels cannot take every descriptor srt has.
func TestTerminatedStreamsCapped(t *testing.T) {
	var mu sync.Mutex
	open, peak := 0, 0
	release := make(chan struct{})
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-release
		io.Copy(io.Discard, r.Body)
	}))
	srv.Config.ConnState = func(c net.Conn, st http.ConnState) {
		mu.Lock()
		defer mu.Unlock()
		switch st {
		case http.StateNew:
			open++
			peak = max(peak, open)
		case http.StateClosed, http.StateHijacked:
			open--
		}
	}
	srv.StartTLS() // HTTP/1.1 only
	defer srv.Close()
	roots := x509.NewCertPool()
	roots.AddCert(srv.Certificate())
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	s := New(policy(t, []string{"example.com", "127.0.0.1"}, nil, nil))
	s.Resolve = fakeDNS(map[string]string{"example.com": "127.0.0.1"})
	s.MaxConnsPerClient = 8
	s.SetInspection(&Inspection{CA: ca, RootCAs: roots})
	httpAddr, _ := startFor(t, s, &Client{ID: "cmd"})
	pool := x509.NewCertPool()
	pool.AddCert(ca.Certificate())
	c := client("http://"+httpAddr, pool, true)
	var wg sync.WaitGroup
	codes := make(chan int, 40)
	for range 40 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			resp, err := c.Post("https://example.com:"+port+"/", "text/plain", strings.NewReader("x"))
			if err != nil {
				codes <- 0
				return
			}
			resp.Body.Close()
			codes <- resp.StatusCode
		}()
	}
	time.Sleep(time.Second)
	close(release)
	wg.Wait()
	close(codes)
	refused := 0
	for code := range codes {
		if code == http.StatusServiceUnavailable {
			refused++
		}
	}
	mu.Lock()
	defer mu.Unlock()
	if peak > 8 || refused == 0 {
		t.Errorf("the origin saw %d connections at once (cap 8), %d requests refused", peak, refused)
	}
}

// Each Update puts a new inspection in force: the old one stops taking
// connections, and its goroutines go, however many Updates come.
func TestSetInspectionRetires(t *testing.T) {
	ca, err := NewCA()
	if err != nil {
		t.Fatal(err)
	}
	s := New(policy(t, []string{"example.com"}, nil, nil))
	defer s.Close()
	s.SetInspection(&Inspection{CA: ca})
	time.Sleep(50 * time.Millisecond)
	before := runtime.NumGoroutine()
	for range 50 {
		s.SetInspection(&Inspection{CA: ca})
	}
	deadline := time.Now().Add(5 * time.Second)
	for runtime.NumGoroutine() > before+5 {
		if time.Now().After(deadline) {
			t.Fatalf("goroutines grew from %d to %d over 50 inspections", before, runtime.NumGoroutine())
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A client that starts TLS late, after the wait for a server that speaks
// first: terminated all the same, through CONNECT and SOCKS (relayed
// unread, it would pass the injection's and the request policy's reading
// by: the second attack round's bypass). A server that speaks first
// still reaches its client, and the tunnel relays both ways; a
// ClientHello after the server spoke is cut and reported.
func TestTerminateLateClientHello(t *testing.T) {
	ia := &injectAuth{}
	s, httpAddr, socksAddr, ca, port := terminating(t, &Inspection{}, ia.inject)
	refused := recordRefusals(s)
	late := func(name string, c net.Conn) {
		t.Helper()
		terminatedGet(t, name, c, ca, peekTimeout+300*time.Millisecond, nil)
	}
	head, conn := connectHTTP(t, httpAddr, "example.com:"+port)
	if !strings.HasPrefix(head, "HTTP/1.1 200") {
		t.Fatalf("CONNECT: %q", head)
	}
	late("CONNECT", conn)
	code, sc := socksConnect(t, socksAddr, 3, []byte("example.com"), portOf(t, port))
	if code != 0 {
		t.Fatalf("SOCKS: %d", code)
	}
	sc.SetDeadline(time.Time{})
	late("SOCKS", sc)

	// A server that speaks first.
	ln := testenv.Serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) {
		io.WriteString(c, "220 hello\r\n")
		io.Copy(c, c) // then an echo
	})
	target := ln.Addr().String()
	for _, tlsLate := range []bool{false, true} {
		head, conn := connectHTTP(t, httpAddr, target)
		if !strings.HasPrefix(head, "HTTP/1.1 200") {
			t.Fatalf("CONNECT %s: %q", target, head)
		}
		conn.SetDeadline(time.Now().Add(5 * time.Second))
		br := bufio.NewReader(conn)
		if line, _ := br.ReadString('\n'); line != "220 hello\r\n" {
			t.Fatalf("the server's greeting did not reach the client: %q", line)
		}
		if !tlsLate {
			io.WriteString(conn, "QUIT\r\n")
			if line, _ := br.ReadString('\n'); line != "QUIT\r\n" {
				t.Errorf("the tunnel did not relay after the greeting: %q", line)
			}
		} else {
			tc := tls.Client(conn, &tls.Config{RootCAs: ca, ServerName: "example.com"})
			if err := tc.Handshake(); err == nil {
				t.Errorf("a ClientHello after the server spoke was relayed or terminated")
			}
		}
		conn.Close()
	}
	if got := refused(); len(got) != 1 || !strings.Contains(got[0], "after the server had spoken") {
		t.Errorf("refusals reported: %q", got)
	}
}

// A tunnel that opens with a TLS record other than a handshake (a warning
// alert, which Go's and other servers skip before the ClientHello) is
// TLS all the same: terminated, not relayed unread (the third attack
// round's bypass). An SSLv2-style hello, which srt cannot terminate, is
// refused; bytes that only look like one at first (a length-prefixed
// binary protocol) are relayed.
func TestTerminateOtherTLSRecordsFirst(t *testing.T) {
	ia := &injectAuth{}
	s, httpAddr, socksAddr, ca, port := terminating(t, &Inspection{}, ia.inject)
	refused := recordRefusals(s)
	alert := []byte{0x15, 0x03, 0x01, 0x00, 0x02, 0x01, 0x5a} // a warning alert, user_canceled
	alertFirst := func(name string, c net.Conn, wait time.Duration) {
		t.Helper()
		terminatedGet(t, name, c, ca, wait, alert)
	}
	for _, wait := range []time.Duration{0, peekTimeout + 300*time.Millisecond} {
		head, conn := connectHTTP(t, httpAddr, "example.com:"+port)
		if !strings.HasPrefix(head, "HTTP/1.1 200") {
			t.Fatalf("CONNECT: %q", head)
		}
		alertFirst(fmt.Sprintf("CONNECT, after %v", wait), conn, wait)
	}
	// The fifth round's spellings: the alert's version byte 0x02, 0x00 or
	// 0x04, which Go's server takes in a first record all the same.
	for _, major := range []byte{0x02, 0x00, 0x04} {
		head, conn := connectHTTP(t, httpAddr, "example.com:"+port)
		if !strings.HasPrefix(head, "HTTP/1.1 200") {
			t.Fatalf("CONNECT: %q", head)
		}
		terminatedGet(t, fmt.Sprintf("an alert versioned %#02x", major), conn, ca, 0, []byte{0x15, major, 0x01, 0x00, 0x02, 0x01, 0x5a})
	}
	code, sc := socksConnect(t, socksAddr, 3, []byte("example.com"), portOf(t, port))
	if code != 0 {
		t.Fatalf("SOCKS: %d", code)
	}
	sc.SetDeadline(time.Time{})
	alertFirst("SOCKS", sc, 0)

	// An echo server for the rest.
	ln := testenv.Serve(t, "tcp", "127.0.0.1:0", func(c net.Conn) { io.Copy(c, c) })
	// An SSLv2-style ClientHello: refused, nothing relayed.
	head, conn := connectHTTP(t, httpAddr, ln.Addr().String())
	if !strings.HasPrefix(head, "HTTP/1.1 200") {
		t.Fatalf("CONNECT: %q", head)
	}
	conn.Write([]byte{0x80, 0x2e, 0x01, 0x03, 0x01, 0x00, 0x15})
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _ := conn.Read(make([]byte, 16)); n != 0 {
		t.Errorf("an SSLv2-style hello was relayed")
	}
	conn.Close()
	// The same, its first byte alone and the rest too late to tell.
	head, conn = connectHTTP(t, httpAddr, ln.Addr().String())
	if !strings.HasPrefix(head, "HTTP/1.1 200") {
		t.Fatalf("CONNECT: %q", head)
	}
	conn.Write([]byte{0x80})
	time.Sleep(peekTimeout + 200*time.Millisecond)
	conn.Write([]byte{0x2e, 0x01, 0x03, 0x01, 0x00, 0x15})
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	if n, _ := conn.Read(make([]byte, 16)); n != 0 {
		t.Errorf("a slow SSLv2-style hello was relayed")
	}
	conn.Close()
	// A binary protocol whose first length byte has its high bit set.
	head, conn = connectHTTP(t, httpAddr, ln.Addr().String())
	if !strings.HasPrefix(head, "HTTP/1.1 200") {
		t.Fatalf("CONNECT: %q", head)
	}
	msg := []byte{0xdd, 0x00, 0x00, 0x00, 'p', 'i', 'n', 'g'}
	conn.Write(msg)
	conn.SetReadDeadline(time.Now().Add(5 * time.Second))
	got := make([]byte, len(msg))
	if _, err := io.ReadFull(conn, got); err != nil || !bytes.Equal(got, msg) {
		t.Errorf("a binary protocol was not relayed: %q %v", got, err)
	}
	conn.Close()
	if got := refused(); len(got) != 2 || !strings.Contains(got[0], "SSLv2") || !strings.Contains(got[1], "SSLv2") {
		t.Errorf("refusals reported: %q", got)
	}
}

// recordRefusals records the reasons of the decisions s refuses.
func recordRefusals(s *Server) func() []string {
	var mu sync.Mutex
	var refused []string
	s.OnDecision = func(d Decision) {
		mu.Lock()
		defer mu.Unlock()
		if !d.Allowed {
			refused = append(refused, d.Reason)
		}
	}
	return func() []string {
		mu.Lock()
		defer mu.Unlock()
		return slices.Clone(refused)
	}
}

// terminatedGet waits, sends prelude, then shakes hands over c trusting
// only srt's CA (so the tunnel must be srt's terminated one) and asks for
// a request the injector rewrites: srt must have read it.
func terminatedGet(t *testing.T, name string, c net.Conn, ca *x509.CertPool, wait time.Duration, prelude []byte) {
	t.Helper()
	defer c.Close()
	time.Sleep(wait)
	c.Write(prelude)
	tc := tls.Client(c, &tls.Config{RootCAs: ca, ServerName: "example.com", NextProtos: []string{"http/1.1"}})
	tc.SetDeadline(time.Now().Add(5 * time.Second))
	if err := tc.Handshake(); err != nil {
		t.Fatalf("%s: the tunnel was not terminated by srt (its CA): %v", name, err)
	}
	fmt.Fprintf(tc, "GET / HTTP/1.1\r\nHost: example.com\r\nAuthorization: Bearer SENTINEL\r\nConnection: close\r\n\r\n")
	if body, _ := io.ReadAll(tc); !strings.Contains(string(body), "auth=Bearer real") {
		t.Errorf("%s: the request was not read by srt: %q", name, body)
	}
}
