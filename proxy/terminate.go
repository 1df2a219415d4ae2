package proxy

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"net/http/httputil"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/srt-go/srt/netfilter"
)

// TLS termination (spec d.6): a tunnel to an allowed host that the
// command opens with a TLS ClientHello is answered by srt with a leaf of
// its CA for the name asked, and every request inside goes on over a TLS
// connection of srt's own to that host, verified against the host's
// roots. Only there, where srt reads the request and knows it speaks to
// the real host, may a masked credential's sentinel become the real
// value. Tunnels that do not start with TLS are relayed as they are
// (opaque), unless RefuseOpaque.

// Termination default limits (spec b.4 network.tlsTerminate).
const (
	DefaultMaxTunnels       = 256
	DefaultHandshakeTimeout = 10 * time.Second
	// requestHeadTimeout bounds the wait for a request head after the
	// handshake, and keepAliveTimeout the wait for the next one after a
	// response (the reference's 10 s and 6 s; it announces 5).
	requestHeadTimeout = 10 * time.Second
	keepAliveTimeout   = 6 * time.Second
	// maxStreams bounds the requests one terminated HTTP/2 tunnel
	// carries at once, and maxUpstreamPerHost the connections srt keeps
	// to one origin for all commands; each upstream connection also
	// counts against its command's MaxConnsPerClient.
	maxStreams         = 32
	maxUpstreamPerHost = 256
)

// Inspection is what the proxies do with the tunnels they terminate and
// the requests they read. A Server with none relays every tunnel.
type Inspection struct {
	// CA signs the leaves shown to the command.
	CA *CA
	// Exclude are host-only patterns whose tunnels are relayed, never
	// terminated (tlsTerminate.excludeDomains).
	Exclude []netfilter.Pattern
	// MaxTunnels bounds the terminated tunnels open at once across the
	// server; past it a CONNECT is answered 503 (0: DefaultMaxTunnels).
	MaxTunnels int
	// HandshakeTimeout bounds the command's TLS handshake (0:
	// DefaultHandshakeTimeout).
	HandshakeTimeout time.Duration
	// RootCAs verify the upstream servers; nil means the host's roots
	// (SSL_CERT_FILE and SSL_CERT_DIR of srt's environment count).
	RootCAs *x509.CertPool
	// RefuseOpaque refuses tunnels that cannot be inspected: to an
	// excluded host, or whose first bytes are not a TLS ClientHello.
	RefuseOpaque bool
	// RequireHostMatch refuses (421) a request whose Host is not the
	// tunnel's target, and shows a leaf for the target whatever name the
	// ClientHello asks for.
	RequireHostMatch bool
	// StripResponseHeaders are removed from every response (any case).
	StripResponseHeaders []string
	// AllowPlaintextHeaderSet lets the Server's Filter set headers on
	// plain HTTP requests; AmbiguousTarget is what is done with a request
	// whose target names different paths as spelled and normalized, while
	// a Filter is set (TargetRefuse, the default; TargetAsSpelled;
	// TargetNormalize).
	AllowPlaintextHeaderSet bool
	AmbiguousTarget         string
}

// Injector changes a request on its way upstream: the sentinels of
// masked credentials become the real values (spec b.4); and its response
// on the way back, where real values become sentinels again.
type Injector interface {
	// Request rewrites r (headers, target, body) in place. A non-nil
	// error refuses the request with the error's status.
	Request(r *http.Request) error
	// Response rewrites the response to a request Request rewrote. A
	// non-nil error answers the command with the error's status
	// instead. Reading the body it leaves (or, after a 101, the
	// upgraded stream) may end in a *StatusError: the injector cut the
	// response off there, and the proxy reports why.
	Response(resp *http.Response) error
	// ResponseHeader rewrites, in place, the headers of an
	// informational (1xx) response to it. A non-nil error is a refusal
	// the proxy reports; the 1xx goes on with the headers as rewritten
	// (the reverse proxy relays it from a hook that cannot stop it).
	ResponseHeader(h http.Header) error
}

type injectorKey struct{}

// StatusError is an error that carries the HTTP status to answer with.
type StatusError struct {
	Status int
	Reason string
}

func (e *StatusError) Error() string { return e.Reason }

// terminates says whether host's tunnels are terminated.
func (in *Inspection) terminates(host netfilter.Host) bool { return !matchesAny(in.Exclude, host) }

func (in *Inspection) maxTunnels() int {
	if in.MaxTunnels > 0 {
		return in.MaxTunnels
	}
	return DefaultMaxTunnels
}

func (in *Inspection) handshakeTimeout() time.Duration {
	if in.HandshakeTimeout > 0 {
		return in.HandshakeTimeout
	}
	return DefaultHandshakeTimeout
}

// tunnel is one terminated tunnel: who opened it, to where.
type tunnel struct {
	client   *Client
	protocol string
	host     string // as the client spelled it
	canon    netfilter.Host
	port     uint16
	// tls: the tunnel was terminated (false: a plain HTTP connection
	// read by the inspecting server).
	tls bool
	// sni is the server name the ClientHello asked for ("" for none).
	sni string
	// plain: a connection of plain HTTP proxy requests, each of which
	// names (and is decided for) its own target.
	plain bool
}

// inspector is a Server's machinery for terminated tunnels: one HTTP
// server that reads the requests of every terminated tunnel, and one
// transport that carries them upstream.
type inspector struct {
	in      *Inspection
	s       *Server
	srv     *http.Server
	ln      *chanListener
	proxy   *httputil.ReverseProxy
	tunnels sync.Map // *tls.Conn or net.Conn → *tunnel
	open    atomic.Int64
	// told: the tunnel cap was reported for these clients, until the
	// count is back below half the cap.
	toldMu sync.Mutex
	told   map[*Client]bool
}

type tunnelKey struct{}

// SetInspection puts in in force for the next connections (nil: no
// inspection). Tunnels already terminated stay with what they had.
func (s *Server) SetInspection(in *Inspection) {
	var ins *inspector
	if in != nil {
		ins = s.newInspector(in)
	}
	if old := s.inspect.Swap(ins); old != nil {
		// It takes no new connection and keeps no idle upstream one; the
		// requests it is reading finish, and Close ends what is left.
		old.ln.Close()
		t := old.proxy.Transport.(*protoTransport)
		t.h1.CloseIdleConnections()
		t.h2.CloseIdleConnections()
		s.mu.Lock()
		s.retired = append(s.retired, old)
		s.mu.Unlock()
	}
}

func (s *Server) newInspector(in *Inspection) *inspector {
	ins := &inspector{in: in, s: s, ln: newChanListener(), told: map[*Client]bool{}}
	newTransport := func(h2 bool) *http.Transport {
		t := &http.Transport{
			DialContext:           ins.dial,
			TLSClientConfig:       &tls.Config{RootCAs: in.RootCAs, MinVersion: tls.VersionTLS12},
			ForceAttemptHTTP2:     h2,
			MaxIdleConns:          256,
			MaxIdleConnsPerHost:   8,
			MaxConnsPerHost:       maxUpstreamPerHost,
			IdleConnTimeout:       90 * time.Second,
			TLSHandshakeTimeout:   DialTimeout,
			ExpectContinueTimeout: time.Second,
			// Each body moves in 64 KiB reads and writes, not 4 KiB ones.
			ReadBufferSize:  64 << 10,
			WriteBufferSize: 64 << 10,
		}
		if !h2 {
			t.TLSNextProto = map[string]func(string, *tls.Conn) http.RoundTripper{}
		}
		return t
	}
	// Upstream speaks what the command spoke: a bulk download moves
	// faster as one HTTP/1.1 stream than as HTTP/2 frames, and a client
	// that multiplexes keeps its multiplexing.
	transport := &protoTransport{h1: newTransport(false), h2: newTransport(true), report: ins.reportRefusal}
	ins.proxy = &httputil.ReverseProxy{
		Rewrite:        ins.rewrite,
		Transport:      transport,
		ModifyResponse: ins.modifyResponse,
		ErrorHandler:   ins.upstreamError,
		FlushInterval:  0, // a response of unknown length (a stream) is flushed as it comes
		ErrorLog:       discardLog,
	}
	ins.srv = &http.Server{
		// A terminated HTTP/2 tunnel may carry this many requests at once
		// (Go's default is 250, each of which may want an upstream).
		HTTP2:             &http.HTTP2Config{MaxConcurrentStreams: maxStreams},
		Handler:           http.HandlerFunc(ins.serveHTTP),
		ReadHeaderTimeout: requestHeadTimeout,
		IdleTimeout:       keepAliveTimeout,
		ErrorLog:          discardLog,
		ConnContext: func(ctx context.Context, c net.Conn) context.Context {
			if t, ok := ins.tunnels.Load(c); ok {
				return context.WithValue(ctx, tunnelKey{}, t)
			}
			return ctx
		},
		ConnState: func(c net.Conn, st http.ConnState) {
			if st == http.StateClosed || st == http.StateHijacked {
				if t, ok := ins.tunnels.LoadAndDelete(c); ok && !t.(*tunnel).plain && t.(*tunnel).tls {
					ins.release(t.(*tunnel).client)
				}
			}
		},
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		ins.srv.Serve(ins.ln)
	}()
	return ins
}

// closeInspector stops the inspecting server and its tunnels.
func (ins *inspector) close() {
	ins.srv.Close()
	ins.ln.Close()
	t := ins.proxy.Transport.(*protoTransport)
	t.h1.CloseIdleConnections()
	t.h2.CloseIdleConnections()
}

// acquire counts a tunnel about to be terminated; false: at the cap, and
// the refusal was reported if this client had not been told.
func (ins *inspector) acquire(client *Client, protocol, host string, port uint16) bool {
	limit := int64(ins.in.maxTunnels())
	if ins.open.Add(1) <= limit {
		return true
	}
	ins.open.Add(-1)
	ins.toldMu.Lock()
	tell := !ins.told[client]
	ins.told[client] = true
	ins.toldMu.Unlock()
	if tell {
		ins.s.report(client, ProtocolHTTPRequest, "CONNECT "+hostPortText(host, port), 0,
			fmt.Sprintf("the sandbox's limit of %d TLS-terminated tunnels at once is reached; the limit is network.tlsTerminate.maxTunnels in the sandbox's configuration", limit))
	}
	return false
}

func (ins *inspector) release(client *Client) {
	if ins.open.Add(-1) < int64(ins.in.maxTunnels())/2 {
		ins.toldMu.Lock()
		clear(ins.told)
		ins.toldMu.Unlock()
	}
}

// serveHTTPConn serves a connection of plain HTTP requests to one allowed
// target (the transparent path's port-80 traffic) on the inspecting
// server: each request goes to that target, whatever its Host says.
func (ins *inspector) serveHTTPConn(c net.Conn, head []byte, t *tunnel) {
	pc := &prefixConn{Conn: c, head: head, closed: make(chan struct{})}
	ins.tunnels.Store(net.Conn(pc), t)
	if !ins.ln.put(pc) {
		ins.tunnels.Delete(net.Conn(pc))
		return
	}
	<-pc.closed
}

// looksHTTP says whether a stream's first bytes start an HTTP request: a
// method (a token of capitals) and a space. What does, the inspecting
// server reads, and refuses if it is not HTTP after all.
func looksHTTP(head []byte) bool {
	for i, c := range head {
		switch {
		case c >= 'A' && c <= 'Z' && i < 16:
		case c == ' ':
			return i > 0
		default:
			return false
		}
	}
	return false
}

// serveAnswered serves the terminated tunnel t, acquired for its client,
// once reply has told the client it is open (a CONNECT's 200, a SOCKS
// success); the tunnel is released if the answer cannot be written.
func (ins *inspector) serveAnswered(c net.Conn, br *bufio.Reader, t *tunnel, reply func() error) {
	if reply() != nil {
		ins.release(t.client)
		return
	}
	c.SetDeadline(time.Time{})
	ins.serveTunnel(c, pending(br), t, true)
}

// pending is what br read past the request: the client's first bytes in
// the tunnel, which go first.
func pending(br *bufio.Reader) []byte {
	head, _ := br.Peek(br.Buffered())
	return head
}

// join relays c and up, head (what c sent ahead) first.
func (s *Server) join(c, up net.Conn, head []byte) {
	if len(head) > 0 {
		if _, err := up.Write(head); err != nil {
			return
		}
	}
	relay(c, up, s.IdleTimeout)
}

// serveTunnel serves an allowed tunnel to host:port whose opening the
// client has already been answered: terminated when it starts with a
// TLS ClientHello, else relayed (or refused with RefuseOpaque). head is
// what was read from c already; counted says that a slot of the tunnel
// cap was taken for it (and is given back here).
func (ins *inspector) serveTunnel(c net.Conn, head []byte, t *tunnel, counted bool) {
	in := ins.in
	if len(head) == 0 {
		// A client that speaks first (TLS does) sends at once; a
		// tunnel whose server speaks first is served by serveQuiet.
		c.SetReadDeadline(time.Now().Add(peekTimeout))
		var b [1]byte
		n, _ := c.Read(b[:])
		c.SetReadDeadline(time.Time{})
		head = b[:n]
		if n == 0 && !in.RefuseOpaque {
			if counted {
				ins.release(t.client)
			}
			ins.serveQuiet(c, t)
			return
		}
	}
	head, kind := startOf(c, head)
	if kind == startSSLv2 {
		if counted {
			ins.release(t.client)
		}
		ins.s.refuseOpaque(t.client, t.protocol, t.host, t.port, "the tunnel starts with an SSLv2-style hello, which srt cannot terminate and will not relay unread")
		return
	}
	if kind != startTLS {
		if counted {
			ins.release(t.client)
		}
		if in.RefuseOpaque {
			ins.s.refuseOpaque(t.client, t.protocol, t.host, t.port, "tunnel carries no TLS and cannot be inspected")
			return
		}
		ins.s.relayTo(c, head, t.client, ins.s.policy.Load(), t.protocol, t.host, t.port)
		return
	}
	if !counted {
		if !ins.acquire(t.client, t.protocol, t.host, t.port) {
			return
		}
	}
	name := t.canon.String()
	cfg := &tls.Config{
		MinVersion: tls.VersionTLS12,
		// HTTP/1.1 first: a client that speaks both gets it (one bulk
		// stream moves about twice as fast through Go's HTTP/1.1 as
		// through its HTTP/2); one that speaks only HTTP/2 (gRPC) gets
		// HTTP/2, on both legs.
		NextProtos: []string{"http/1.1", "h2"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			t.sni = hello.ServerName
			if hello.ServerName != "" && !in.RequireHostMatch {
				return in.CA.Leaf(hello.ServerName)
			}
			return in.CA.Leaf(name)
		},
	}
	pc := &prefixConn{Conn: c, head: head, closed: make(chan struct{})}
	tc := tls.Server(pc, cfg)
	ctx, cancel := context.WithTimeout(context.Background(), in.handshakeTimeout())
	err := tc.HandshakeContext(ctx)
	cancel()
	if err != nil {
		ins.release(t.client)
		return
	}
	t.tls = true
	ins.tunnels.Store(net.Conn(tc), t)
	if !ins.ln.put(tc) {
		ins.tunnels.Delete(net.Conn(tc))
		ins.release(t.client)
		tc.Close()
		return
	}
	// The HTTP server owns tc now; the caller's deferred close of c (and
	// its count of the client's connections) waits for it to close tc.
	<-pc.closed
}

// serveQuiet serves a tunnel whose client said nothing at first: its
// server may speak first (ssh, SMTP), so what the server sends reaches
// the client while srt waits for the client's first byte. A TLS
// ClientHello that comes late, before the server said anything, is
// terminated as one that came at once — relayed unread, it would pass the
// request policy and the search for real credential values by; one that
// comes after the server spoke is cut (srt cannot take over a stream
// under way). Anything else is relayed as it is.
func (ins *inspector) serveQuiet(c net.Conn, t *tunnel) {
	s := ins.s
	up, err := s.dialAllowed(context.Background(), t.client, s.policy.Load(), t.protocol, t.host, t.port)
	if err != nil {
		return
	}
	var sent atomic.Int64
	done := make(chan struct{})
	go func() {
		defer close(done)
		buf := make([]byte, 32<<10)
		for {
			n, err := up.Read(buf)
			if n > 0 {
				sent.Add(int64(n))
				if _, err := c.Write(buf[:n]); err != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	// The client's first byte, for as long as the tunnel is not idle
	// both ways.
	var first [1]byte
	n, lastSent, lastMove := 0, int64(0), time.Now()
	for {
		if s.IdleTimeout > 0 {
			c.SetReadDeadline(time.Now().Add(s.IdleTimeout / 4))
		}
		var err error
		if n, err = c.Read(first[:]); n > 0 || err == nil {
			break
		}
		var ne net.Error
		if s.IdleTimeout <= 0 || !errors.As(err, &ne) || !ne.Timeout() {
			break
		}
		if v := sent.Load(); v != lastSent {
			lastSent, lastMove = v, time.Now()
		}
		if time.Since(lastMove) >= s.IdleTimeout {
			break
		}
	}
	c.SetReadDeadline(time.Time{})
	// Stop the server's half, to hand the tunnel on whole.
	up.SetReadDeadline(time.Unix(1, 0))
	<-done
	up.SetReadDeadline(time.Time{})
	head, kind := startOf(c, first[:n])
	switch {
	case n == 0:
		up.Close()
	case kind == startTLS && sent.Load() == 0:
		up.Close()
		ins.serveTunnel(c, head, t, false)
	case kind != startOther:
		up.Close()
		s.refuseOpaque(t.client, t.protocol, t.host, t.port,
			"a TLS handshake began after the server had spoken: srt cannot terminate it, and relayed unread it would pass the request policy by; the tunnel was closed")
	default:
		defer up.Close()
		s.join(c, up, head)
	}
}

// How a tunnel's first bytes start.
const (
	startOther = iota
	// startTLS: a TLS record of any type a server may take first — a
	// handshake, or an alert or change_cipher_spec before it (Go's
	// server skips a warning alert, then reads the ClientHello): srt
	// terminates it, for relayed unread it would pass the request policy
	// and the search of responses by.
	startTLS
	// startSSLv2: an SSLv2-style ClientHello, which some servers still
	// take and srt's TLS cannot: refused.
	startSSLv2
)

// startOf reads, if it must (for at most peekTimeout), enough of c after
// head to tell how the tunnel starts; it returns all it read.
func startOf(c net.Conn, head []byte) ([]byte, int) {
	need := func(n int) bool {
		if len(head) >= n {
			return true
		}
		c.SetReadDeadline(time.Now().Add(peekTimeout))
		defer c.SetReadDeadline(time.Time{})
		for len(head) < n {
			b := make([]byte, n-len(head))
			k, err := c.Read(b)
			head = append(head, b[:k]...)
			if err != nil {
				break
			}
		}
		return len(head) >= n
	}
	if len(head) == 0 {
		return head, startOther
	}
	switch b := head[0]; {
	case b >= 0x14 && b <= 0x18: // change_cipher_spec, alert, handshake, application_data, heartbeat
		// Any version a TLS server may take in a first record: Go's
		// takes every one below 0x1000 (an alert versioned 0x0201, then
		// the ClientHello), so srt's, which is Go's, does too.
		if b == recordHandshake || !need(2) || head[1] < 0x10 {
			return head, startTLS
		}
	case b&0x80 != 0: // a two-byte SSLv2 record length, then the message type
		// Bytes too slow to tell count as one: relayed, an SSLv2-style
		// hello would reach a server that takes it unread.
		if !need(4) || head[2] == 1 && (head[3] == 3 || head[3] == 0 || head[3] == 2) {
			return head, startSSLv2
		}
	}
	return head, startOther
}

// relayTo dials an allowed destination under policy p and joins c to it,
// head first; it returns the dial's error, once nothing was relayed.
func (s *Server) relayTo(c net.Conn, head []byte, client *Client, p *netfilter.Policy, protocol, host string, port uint16) error {
	up, err := s.dialAllowed(context.Background(), client, p, protocol, host, port)
	if err != nil {
		return err
	}
	defer up.Close()
	s.join(c, up, head)
	return nil
}

// Protocols of the decisions the inspecting proxy reports: a refused
// request ("METHOD url" in Host), a refused SOCKS tunnel.
const (
	ProtocolHTTPRequest = "http-request"
	ProtocolSOCKSTunnel = "socks-tunnel"
)

// refuseOpaque reports a tunnel refused under RefuseOpaque.
func (s *Server) refuseOpaque(client *Client, protocol, host string, port uint16, why string) {
	if protocol == "socks5" {
		s.report(client, ProtocolSOCKSTunnel, hostPortText(host, port), 0, "refuseOpaqueTunnels")
		return
	}
	s.report(client, ProtocolHTTPRequest, "CONNECT "+hostPortText(host, port), 0, why)
}

func hostPortText(host string, port uint16) string {
	return net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(int(port)))
}

// report records a refusal of an allowed destination for a reason of the
// inspecting proxy.
func (s *Server) report(client *Client, protocol, host string, port uint16, reason string) {
	if s.OnDecision != nil {
		s.OnDecision(Decision{Protocol: protocol, Host: host, Port: port, Decision: netfilter.Decision{Reason: reason}, Client: client})
	}
}

// reportRequest records a refused request.
func (s *Server) reportRequest(t *tunnel, r *http.Request, reason string) {
	s.report(t.client, ProtocolHTTPRequest, r.Method+" "+requestURL(t, r), 0, reason)
}

// requestURL is a request's URL for a violation line: scheme, host and
// path, with the query and fragment cut to "?…" and "#…".
func requestURL(t *tunnel, r *http.Request) string {
	scheme := "http"
	if t.tls {
		scheme = "https"
	}
	host := r.Host
	if host == "" {
		host = t.host
	}
	u := scheme + "://" + host + r.URL.EscapedPath()
	if r.URL.RawQuery != "" || r.URL.ForceQuery {
		u += "?…"
	}
	if r.URL.Fragment != "" {
		u += "#…"
	}
	return u
}

// prefixConn is a connection whose first bytes were already read; closed
// is closed with it.
type prefixConn struct {
	net.Conn
	head   []byte
	closed chan struct{}
	once   sync.Once
}

func (p *prefixConn) Close() error {
	err := p.Conn.Close()
	p.once.Do(func() { close(p.closed) })
	return err
}

func (p *prefixConn) Read(b []byte) (int, error) {
	if len(p.head) > 0 {
		n := copy(b, p.head)
		p.head = p.head[n:]
		return n, nil
	}
	return p.Conn.Read(b)
}

// chanListener hands connections to an http.Server.
type chanListener struct {
	ch     chan net.Conn
	done   chan struct{}
	closed sync.Once
}

func newChanListener() *chanListener {
	return &chanListener{ch: make(chan net.Conn), done: make(chan struct{})}
}

func (l *chanListener) put(c net.Conn) bool {
	select {
	case l.ch <- c:
		return true
	case <-l.done:
		return false
	}
}

func (l *chanListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.ch:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *chanListener) Close() error {
	l.closed.Do(func() { close(l.done) })
	return nil
}

func (l *chanListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }

var discardLog = log.New(io.Discard, "", 0)

// terminating returns the inspector, and the tunnel it is to serve, when
// a tunnel of client's to host:port is to be terminated; refuse says that
// it is to be refused instead (RefuseOpaque, with host excluded from
// termination).
func (s *Server) terminating(client *Client, protocol, host string, port uint16) (ins *inspector, t *tunnel, refuse bool) {
	ins = s.inspect.Load()
	if ins == nil {
		return nil, nil, false
	}
	t = newTunnel(client, protocol, host, port)
	if ins.in.CA != nil && ins.in.terminates(t.canon) {
		return ins, t, false
	}
	return nil, nil, ins.in.RefuseOpaque
}

// newTunnel describes an allowed tunnel for serveTunnel.
func newTunnel(client *Client, protocol, host string, port uint16) *tunnel {
	h, _ := netfilter.ParseHost(host) // decided hosts parse
	return &tunnel{client: client, protocol: protocol, host: host, canon: h, port: port}
}
