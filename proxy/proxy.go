// Package proxy holds the host-side policy proxies: an HTTP proxy
// (CONNECT and absolute-form requests) and a SOCKS5 proxy, which ask
// netfilter about every connection before dialling it. They serve any
// listener; srt gives them Unix sockets that only its sandboxes reach.
package proxy

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/srt-go/srt/netfilter"
)

// Timeouts of one connection.
const (
	// HandshakeTimeout bounds the time from accept to a complete request.
	HandshakeTimeout = 10 * time.Second
	// DialTimeout bounds name resolution plus the upstream connect.
	DialTimeout = 15 * time.Second
	// IdleTimeout is the default for Server.IdleTimeout.
	IdleTimeout = 30 * time.Minute
)

// Decision is reported for every connection the proxies decide on.
type Decision struct {
	Protocol string // "http", "connect", "socks5", "transparent", "dns"
	Host     string // as the client spelled it
	Port     uint16
	netfilter.Decision
	// Resolved is set when an allowed name was refused for the addresses
	// it resolved to.
	Resolved *netfilter.ResolvedError
	// Client is the listener's client the connection came from; nil for
	// a listener served without one.
	Client *Client
}

// Client is who connects on one listener. A listener is reachable only by
// the sandbox it was made for, so decisions on its connections are
// attributed to that sandbox's command, which cannot claim to be another.
type Client struct {
	// ID names the client in decisions (the command id).
	ID string
	// Credential, when set, is asked of every connection (HTTP Basic
	// Proxy-Authorization, SOCKS5 username/password): the fallback
	// sandbox's proxies listen on host loopback, where any local process
	// could reach them.
	Credential *Credential
	// Allow, when set, allows more destinations for this client alone.
	// It never overrides a deniedDomains entry of the policy: it only
	// answers for hosts the policy's lists do not name, and not at all
	// under a Strict policy.
	Allow *netfilter.Rules
	// Inject, when set, returns what is done to the client's requests
	// to host (canonical) that the proxies read: over TLS they
	// terminated and verified (tls), or plain HTTP; nil: nothing.
	Inject func(host netfilter.Host, tls bool) Injector
}

// Server is the pair of proxies and their policy. The zero value is not
// usable; make one with New.
type Server struct {
	policy atomic.Pointer[netfilter.Policy]

	// Resolve looks up a host name; nil means the system resolver.
	Resolve func(ctx context.Context, host string) ([]netip.Addr, error)
	// Dial connects to an address; nil means a net.Dialer.
	Dial func(ctx context.Context, network, address string) (net.Conn, error)
	// OnDecision, if set, is called for each decision (violations).
	OnDecision func(Decision)
	// Filter, if set, decides on every request the inspecting proxy
	// reads (SetInspection must be on; set both before serving).
	Filter RequestFilter
	// Ask, if set, is asked about a destination no rule decides, unless
	// the policy is Strict (spec d.2 step 7): allow is the answer, reason
	// why not; an error denies ("permission prompt failed"). It is asked
	// for every connection (and plain request): no answer is remembered,
	// and calls are not serialised. It may block; the connection waits.
	Ask func(c *Client, host string, port uint16) (allow bool, reason string, err error)
	// Parent, if set, is the upstream proxy allowed connections go
	// through (taken when the proxies start; spec d.6).
	Parent *Parent
	// IdleTimeout closes a tunnel on which nothing moved either way for
	// that long; 0 means never.
	IdleTimeout time.Duration
	// MaxConnsPerClient bounds the connections one client (one command:
	// all its listeners, the transparent path included; listeners served
	// without a client count as one) has open at once, from accept to
	// close, handshakes included; 0 means no bound. Past it, a request is
	// refused (HTTP 503, SOCKS5 general failure) and the refusal reported
	// as a decision, once until the client is back below half its cap.
	// Without it, one command could take every descriptor srt has, and
	// its own and every other command's connections would fail. New sets
	// the default, MaxConnsPerClient; change it before serving.
	MaxConnsPerClient int

	// mitm routes some hosts to a MITM proxy of the user's (SetMITM).
	mitm atomic.Pointer[MITM]
	// inspect terminates tunnels (SetInspection); nil: none are.
	inspect atomic.Pointer[inspector]
	// retired are inspectors replaced by SetInspection, still serving
	// the tunnels they had; Close stops them.
	retired []*inspector

	mu      sync.Mutex
	conns   map[net.Conn]struct{}
	clients map[*Client]*clientConns
	lns     map[io.Closer]struct{} // listeners and the DNS stub's sockets
	wg      sync.WaitGroup
	closed  bool
}

// Credential is a per-run user name and password for the proxies.
type Credential struct {
	User, Password string
}

// NewCredential makes a random credential.
func NewCredential() (*Credential, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, err
	}
	return &Credential{User: "srt", Password: hex.EncodeToString(b[:])}, nil
}

// matches compares in constant time.
func (c *Credential) matches(user, password string) bool {
	u := subtle.ConstantTimeCompare([]byte(user), []byte(c.User))
	p := subtle.ConstantTimeCompare([]byte(password), []byte(c.Password))
	return u&p == 1
}

// New returns a server with policy p.
func New(p *netfilter.Policy) *Server {
	s := &Server{
		conns:             map[net.Conn]struct{}{},
		clients:           map[*Client]*clientConns{},
		lns:               map[io.Closer]struct{}{},
		IdleTimeout:       IdleTimeout,
		MaxConnsPerClient: MaxConnsPerClient,
	}
	s.policy.Store(p)
	return s
}

// MITM is a MITM proxy of the user's on a Unix socket (spec d.6
// network.mitmProxy): connections to hosts that match Domains, once
// allowed, go through it with an HTTP CONNECT, and through nothing else.
type MITM struct {
	SocketPath string
	Domains    []netfilter.Pattern
}

// SetMITM puts m in force for the next connections (nil: none).
func (s *Server) SetMITM(m *MITM) { s.mitm.Store(m) }

// SetPolicy replaces the policy for the next connections. Readers never
// lock: each connection loads the pointer once.
func (s *Server) SetPolicy(p *netfilter.Policy) { s.policy.Store(p) }

// Policy returns the current policy.
func (s *Server) Policy() *netfilter.Policy { return s.policy.Load() }

// ServeHTTP accepts HTTP proxy connections on l until Close (or until l
// is closed), for client c (nil: anonymous, no credential asked).
func (s *Server) ServeHTTP(l net.Listener, c *Client) error { return s.serve(l, c, s.handleHTTP) }

// ServeSOCKS accepts SOCKS5 connections on l until Close, for client c.
func (s *Server) ServeSOCKS(l net.Listener, c *Client) error { return s.serve(l, c, s.handleSOCKS) }

// handler serves one connection of client; full says that the client is
// at its cap, and the request is to be read and refused.
type handler func(c net.Conn, client *Client, full bool)

func (s *Server) serve(l net.Listener, client *Client, handle handler) error {
	if !s.track(l) {
		return net.ErrClosed
	}
	defer s.untrack(l)
	return s.accept(l, client, handle)
}

// accept serves l, which the caller tracks, until it or the server is
// closed.
func (s *Server) accept(l net.Listener, client *Client, handle handler) error {
	for {
		c, err := Accept(l)
		if err != nil {
			if s.isClosed() || errors.Is(err, net.ErrClosed) {
				return nil
			}
			return err
		}
		a := s.admit(c, client)
		switch a {
		case shut:
			c.Close()
			return nil
		case dropped:
			c.Close()
			continue
		}
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			defer s.release(c, client)
			defer c.Close()
			handle(c, client, a == refused)
		}()
	}
}

func (s *Server) track(l io.Closer) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return false
	}
	s.lns[l] = struct{}{}
	return true
}

func (s *Server) untrack(l io.Closer) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.lns, l)
}

func (s *Server) isClosed() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.closed
}

// Close stops the listeners (the DNS stub's sockets too) and every
// connection, and waits for their goroutines. It is safe to call twice.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for l := range s.lns {
		l.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	retired := s.retired
	s.mu.Unlock()
	if ins := s.inspect.Load(); ins != nil {
		ins.close()
	}
	for _, ins := range retired {
		ins.close()
	}
	s.wg.Wait()
	return nil
}

// decide asks the policy, and the client's own allowances, about
// host:port and reports the decision.
func (s *Server) decide(c *Client, protocol, host string, port uint16) (netfilter.Decision, *netfilter.Policy) {
	p := s.policy.Load()
	d := p.Rules.Decide(host, port)
	if !d.Allowed && d.Rule == "" && d.Reason == netfilter.ReasonNotAllowed && c != nil && c.Allow != nil && !p.Strict {
		if extra := c.Allow.Decide(host, port); extra.Allowed {
			d = extra
		}
	}
	if !d.Allowed && d.Rule == "" && d.Reason == netfilter.ReasonNotAllowed && s.Ask != nil && !p.Strict {
		d = s.ask(c, host, port)
	}
	if s.OnDecision != nil {
		s.OnDecision(Decision{Protocol: protocol, Host: host, Port: port, Decision: d, Client: c})
	}
	return d, p
}

// ask asks the Ask callback about host:port.
func (s *Server) ask(c *Client, host string, port uint16) (d netfilter.Decision) {
	defer func() {
		if recover() != nil {
			d = netfilter.Decision{Reason: "permission prompt failed"}
		}
	}()
	allow, reason, err := s.Ask(c, host, port)
	switch {
	case err != nil:
		return netfilter.Decision{Reason: "permission prompt failed"}
	case allow:
		return netfilter.Decision{Allowed: true, Rule: "asked"}
	}
	if reason = sanitizeViolationText(reason); reason == "" {
		reason = "user denied"
	}
	return netfilter.Decision{Reason: reason}
}

// mayAllow answers the DNS stub's question: could host be allowed on
// some port? A no is reported as a decision of protocol "dns".
func (s *Server) mayAllow(c *Client, host string) bool {
	p := s.policy.Load()
	r := p.Rules
	if r.MayAllow(host) {
		return true
	}
	if c != nil && c.Allow != nil && !p.Strict && c.Allow.MayAllow(host) && !r.Denies(host) {
		return true
	}
	if s.Ask != nil && !p.Strict && !r.Denies(host) {
		// The ask is for the connection, which the name is needed for.
		if _, err := netfilter.ParseHost(host); err == nil {
			return true
		}
	}
	if s.OnDecision != nil {
		d := r.Decide(host, 0)
		if d.Reason == netfilter.ReasonMalformed || d.Rule != "" {
			// As decided for every port: the entry (or the malformed name).
		} else {
			d = netfilter.Decision{Reason: netfilter.ReasonNotAllowed}
		}
		s.OnDecision(Decision{Protocol: "dns", Host: host, Decision: d, Client: c})
	}
	return false
}

// dialAllowed connects to an allowed destination: an IP literal as is, a
// name at the first address that the resolved-address check lets through
// (one lookup; no second resolution that could answer differently).
func (s *Server) dialAllowed(ctx context.Context, c *Client, p *netfilter.Policy, protocol, host string, port uint16) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, DialTimeout)
	defer cancel()
	h, err := netfilter.ParseHost(host)
	if err != nil {
		return nil, err
	}
	dial := s.Dial
	if dial == nil {
		var d net.Dialer
		dial = d.DialContext
	}
	// The user's MITM proxy, for its hosts, resolves and dials; nothing
	// else is tried when it fails.
	if m := s.mitm.Load(); m != nil && matchesAny(m.Domains, h) {
		var d net.Dialer
		c, err := d.DialContext(ctx, "unix", m.SocketPath)
		if err != nil {
			return nil, fmt.Errorf("mitmProxy %s: %w", m.SocketPath, err)
		}
		return connectThrough(c, "mitmProxy "+m.SocketPath, h.String(), port, "")
	}
	// Through a parent proxy, the name goes to it as decided; it resolves
	// and dials (the resolved-address check does not apply there).
	if u := s.Parent.via(h.String(), protocol == "http"); u != nil {
		return dialParent(ctx, dial, u, h.String(), port)
	}
	var targets []netip.Addr
	if h.IsAddr() {
		targets = []netip.Addr{h.Addr}
	} else {
		resolve := s.Resolve
		if resolve == nil {
			resolve = func(ctx context.Context, host string) ([]netip.Addr, error) {
				return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
			}
		}
		found, err := resolve(ctx, h.Name)
		if err != nil {
			return nil, err
		}
		targets, err = p.CheckResolved(h, port, found)
		if err != nil {
			var re *netfilter.ResolvedError
			if errors.As(err, &re) && s.OnDecision != nil {
				s.OnDecision(Decision{Protocol: protocol, Host: host, Port: port, Decision: netfilter.Decision{Rule: "resolved address", Reason: err.Error()}, Resolved: re, Client: c})
			}
			return nil, err
		}
	}
	var firstErr error
	for _, a := range targets {
		c, err := dial(ctx, "tcp", net.JoinHostPort(a.String(), strconv.Itoa(int(port))))
		if err == nil {
			return c, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, fmt.Errorf("connecting to %s:%d: %w", host, port, firstErr)
}

func matchesAny(ps []netfilter.Pattern, h netfilter.Host) bool {
	for _, p := range ps {
		if p.MatchHost(h) {
			return true
		}
	}
	return false
}

// halfCloser is a connection whose write side can be shut alone.
type halfCloser interface{ CloseWrite() error }

// Join joins two connections until both sides are done, as a
// forwarder with no policy of its own does (Forward, ForwardTransparent).
func Join(a, b net.Conn) { relay(a, b, 0) }

// Forward accepts connections on ln until it fails and joins each to a
// new connection to address: a forwarder with no policy of its own (to
// a proxy of the user's, network.httpProxyPort / socksProxyPort).
func Forward(ln net.Listener, network, address string) error {
	for {
		c, err := Accept(ln)
		if err != nil {
			return err
		}
		go func() {
			up, err := net.Dial(network, address)
			if err != nil {
				c.Close()
				return
			}
			Join(c, up)
		}()
	}
}

// bufSize is the copy buffer of one direction of a tunnel, used only when
// spliceCopy cannot splice between the two connections. Measured on a
// 2-core VM through one relay hop on loopback: splice 1.0 GB/s, a 64 KiB
// buffer 0.45 GB/s.
const bufSize = 64 << 10

var buffers = sync.Pool{New: func() any { return new([bufSize]byte) }}

// relay copies both ways until both sides are done. A clean EOF on one side
// is passed on as a half-close, so request-then-response protocols finish;
// an error on either side closes both, so neither goroutine can be left
// blocked by a peer that died. With idle > 0, a tunnel on which neither
// direction moved a byte for that long is closed.
func relay(a, b net.Conn, idle time.Duration) {
	var last atomic.Int64 // unix nanoseconds of the last byte moved either way
	last.Store(time.Now().UnixNano())
	var wg sync.WaitGroup
	copyOne := func(dst, src net.Conn) {
		defer wg.Done()
		err := copyLoop(dst, src, idle, &last)
		if err == io.EOF {
			if hc, ok := dst.(halfCloser); ok && hc.CloseWrite() == nil {
				return
			}
		}
		a.Close()
		b.Close()
	}
	wg.Add(2)
	go copyOne(a, b)
	go copyOne(b, a)
	wg.Wait()
	a.Close()
	b.Close()
}

// copyLoop moves bytes from src to dst until src ends (io.EOF), either side
// fails, or the tunnel has been idle both ways for idle. The bytes move in
// io.CopyBuffer, which lets the kernel splice them; with an idle limit the
// copy is cut by a read deadline four times per period, to record its
// progress for the other direction to see, and goes on unless neither
// direction moved a byte for the whole period.
func copyLoop(dst, src net.Conn, idle time.Duration, last *atomic.Int64) error {
	for {
		if idle > 0 {
			src.SetReadDeadline(time.Now().Add(idle / 4))
		}
		n, err := copyStream(dst, src)
		if err == nil {
			return io.EOF
		}
		if idle <= 0 {
			return err
		}
		if n > 0 {
			last.Store(time.Now().UnixNano())
		}
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() && time.Since(time.Unix(0, last.Load())) < idle {
			continue
		}
		return err
	}
}

// copyStream moves bytes from src to dst until src ends (nil error) or
// either side fails, and returns how many it moved: spliced where the
// kernel can (spliceCopy), else through a pooled buffer. The buffered
// copy hides the connections' ReadFrom and WriteTo, or io.CopyBuffer
// would splice through the net package's pool of pipes, which spliceCopy
// exists to avoid.
func copyStream(dst, src net.Conn) (int64, error) {
	n, handled, err := spliceCopy(dst, src)
	if handled {
		return n, err
	}
	buf := buffers.Get().(*[bufSize]byte)
	defer buffers.Put(buf)
	m, err := io.CopyBuffer(struct{ io.Writer }{dst}, struct{ io.Reader }{src}, buf[:])
	return n + m, err
}
