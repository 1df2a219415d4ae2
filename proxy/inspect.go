package proxy

// The inspecting server's requests: one net/http server reads every
// terminated tunnel (terminate.go) and every plain HTTP request of a
// client while inspection is on. Each request is held to its tunnel's
// target (or, plain, decided for its own), checked (requireHostMatch,
// the filter), given its credentials, and carried upstream over the
// server's transport; its response is searched and stripped on the way
// back.

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptrace"
	"net/http/httputil"
	"net/textproto"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/srt-go/srt/netfilter"
)

// servePlain serves a connection of plain HTTP proxy requests (head
// already read from c) on the inspecting server, which decides each.
func (ins *inspector) servePlain(c net.Conn, head []byte, client *Client) {
	pc := &prefixConn{Conn: c, head: head, closed: make(chan struct{})}
	ins.tunnels.Store(net.Conn(pc), &tunnel{client: client, plain: true})
	if !ins.ln.put(pc) {
		ins.tunnels.Delete(net.Conn(pc))
		return
	}
	<-pc.closed
}

// plainRequest decides one plain HTTP proxy request of conn's client, as
// handleHTTP does a connection's first: the target it names, which the
// Host header must name too, allowed by the policy. It returns the
// request's own tunnel, or nil when it answered the request itself.
func (ins *inspector) plainRequest(w http.ResponseWriter, r *http.Request, conn *tunnel) *tunnel {
	s, client := ins.s, conn.client
	if r.Method == http.MethodConnect {
		// A tunnel takes a connection of its own.
		w.Header().Set("Connection", "close")
		http.Error(w, "a CONNECT must open its own connection", http.StatusBadRequest)
		return nil
	}
	if client != nil && client.Credential != nil {
		user, password, ok := parseBasic(r.Header.Get("Proxy-Authorization"))
		if !ok || !client.Credential.matches(user, password) {
			w.Header().Set("Proxy-Authenticate", `Basic realm="srt"`)
			http.Error(w, "proxy authentication required", http.StatusProxyAuthRequired)
			return nil
		}
	}
	hostHeader := ""
	if hs := r.Header.Values("Host"); len(hs) > 0 {
		hostHeader = hs[0]
	}
	if r.URL.IsAbs() && hostHeader == "" {
		hostHeader = r.Host
	}
	tg, err := requestTarget(r, hostHeader)
	if err != nil {
		w.Header().Set("X-Proxy-Error", "bad-request-target")
		http.Error(w, err.Error(), http.StatusBadRequest)
		return nil
	}
	d, _ := s.decide(client, "http", tg.host, tg.port)
	if !d.Allowed {
		w.Header().Set("X-Proxy-Error", "blocked-by-allowlist")
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		io.WriteString(w, "Connection blocked by network allowlist\n")
		return nil
	}
	return newTunnel(client, "http", tg.host, tg.port)
}

// serveHTTP answers one request read from a terminated tunnel, or from
// a connection of plain HTTP proxy requests.
func (ins *inspector) serveHTTP(w http.ResponseWriter, r *http.Request) {
	t, _ := r.Context().Value(tunnelKey{}).(*tunnel)
	if t == nil {
		http.Error(w, "srt: no tunnel", http.StatusInternalServerError)
		return
	}
	if t.plain {
		if t = ins.plainRequest(w, r, t); t == nil {
			return
		}
		r = r.WithContext(context.WithValue(r.Context(), tunnelKey{}, t))
		r.URL.Scheme, r.URL.Host = "", ""
	}
	if ins.in.RequireHostMatch {
		if why := t.hostMismatch(r); why != "" {
			ins.s.reportRequest(t, r, why)
			w.Header().Set("X-Proxy-Error", "blocked-by-sandbox-runtime")
			http.Error(w, why, http.StatusMisdirectedRequest)
			return
		}
	}
	r, ok := ins.filterRequest(w, r, t)
	if !ok {
		return
	}
	// The request goes to the host the tunnel was allowed for, and says
	// so: a Host naming another site of the same server (a CDN's) would
	// reach a destination no rule allowed.
	r.Host = t.authority()
	if t.client != nil && t.client.Inject != nil {
		if inj := t.client.Inject(t.canon, t.tls); inj != nil {
			if err := inj.Request(r); err != nil {
				ins.refuseRequest(w, t, r, err)
				return
			}
			r = r.WithContext(context.WithValue(r.Context(), injectorKey{}, inj))
		}
	}
	ins.proxy.ServeHTTP(w, r)
}

// hostMismatch says why r does not name the tunnel's target (spec d.6
// requireHostMatch), or "".
func (t *tunnel) hostMismatch(r *http.Request) string {
	tg := target{host: t.host, port: t.port}
	switch {
	case t.tls && t.sni != "" && !sameHost(target{host: t.sni, port: t.port}, tg):
		return "TLS server name does not match the request target"
	case r.URL.IsAbs() && !namesTarget(r.URL.Host, tg, defaultPort(t)):
		return "request-target authority does not match the request target"
	case len(r.Header.Values("Host")) > 1:
		return "more than one Host header"
	case r.Host != "" && !namesTarget(r.Host, tg, defaultPort(t)):
		return "Host header does not match the request target"
	}
	return ""
}

// namesTarget says whether an authority ("host" or "host:port") names
// target, the port absent only when the target's is def.
func namesTarget(authority string, tg target, def uint16) bool {
	h, err := splitTarget(authority, def)
	return err == nil && sameHost(h, tg)
}

// authority is the tunnel's target as a Host header names it: the
// canonical host, and the port unless it is the scheme's own.
func (t *tunnel) authority() string {
	h := t.canon.String()
	if strings.Contains(h, ":") {
		h = "[" + h + "]"
	}
	if t.port == defaultPort(t) {
		return h
	}
	return h + ":" + strconv.Itoa(int(t.port))
}

// refuseRequest answers a request the injector refused.
func (ins *inspector) refuseRequest(w http.ResponseWriter, t *tunnel, r *http.Request, err error) {
	status, reason := http.StatusForbidden, err.Error()
	var se *StatusError
	if errors.As(err, &se) {
		status = se.Status
	}
	ins.s.reportRequest(t, r, reason)
	w.Header().Set("X-Proxy-Error", "blocked-by-sandbox-runtime")
	http.Error(w, reason, status)
}

func defaultPort(t *tunnel) uint16 {
	if t.tls {
		return 443
	}
	return 80
}

// protoTransport carries a request over HTTP/2 when the command sent it
// over HTTP/2, else over HTTP/1.1; report reports an injector's refusal
// of an informational response.
type protoTransport struct {
	h1, h2 *http.Transport
	report func(r *http.Request, err error)
}

type protoKey struct{}

func (p *protoTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if inj, ok := r.Context().Value(injectorKey{}).(Injector); ok {
		// A 1xx response is relayed by the reverse proxy's own hook,
		// which this one runs before, on the same header map.
		r = r.WithContext(httptrace.WithClientTrace(r.Context(), &httptrace.ClientTrace{
			Got1xxResponse: func(code int, h textproto.MIMEHeader) error {
				if err := inj.ResponseHeader(http.Header(h)); err != nil {
					p.report(r, err)
				}
				return nil
			}}))
	}
	if major, _ := r.Context().Value(protoKey{}).(int); major == 2 {
		return p.h2.RoundTrip(r)
	}
	return p.h1.RoundTrip(r)
}

// rewrite aims a request at the tunnel's target.
func (ins *inspector) rewrite(pr *httputil.ProxyRequest) {
	t, _ := pr.In.Context().Value(tunnelKey{}).(*tunnel)
	out := pr.Out
	out.URL.Scheme = "http"
	if t.tls {
		out.URL.Scheme = "https"
	}
	out.URL.Host = net.JoinHostPort(t.canon.String(), strconv.Itoa(int(t.port)))
	pr.Out = out.WithContext(context.WithValue(out.Context(), protoKey{}, pr.In.ProtoMajor))
	out = pr.Out
	out.Host = pr.In.Host
	if pr.In.ProtoMajor == 1 {
		// What the idle timer allows, less a margin.
		out.Header.Del("Keep-Alive")
	}
}

// dial connects to an upstream of a terminated tunnel: the target the
// tunnel was allowed for, with the resolved-address check.
func (ins *inspector) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	t, _ := ctx.Value(tunnelKey{}).(*tunnel)
	if t == nil {
		return nil, errors.New("srt: no tunnel")
	}
	host, _, _ := net.SplitHostPort(addr)
	if host != t.canon.String() {
		return nil, fmt.Errorf("srt: upstream %s is not the tunnel's target", addr)
	}
	// Each upstream connection counts against the command's cap: the
	// streams of one HTTP/2 tunnel to an HTTP/1.1 origin each take one.
	if !ins.s.admitUpstream(t.client) {
		reason := ins.s.refuse(t.client, t.protocol, t.host, t.port)
		return nil, &StatusError{Status: http.StatusServiceUnavailable, Reason: reason}
	}
	c, err := ins.s.dialAllowed(ctx, t.client, ins.s.policy.Load(), t.protocol, t.host, t.port)
	if err != nil {
		ins.s.releaseUpstream(t.client)
		return nil, err
	}
	return &releaseOnClose{Conn: c, release: func() { ins.s.releaseUpstream(t.client) }}, nil
}

// releaseOnClose calls release once, when it is closed.
type releaseOnClose struct {
	net.Conn
	release func()
	once    sync.Once
}

func (c *releaseOnClose) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

func (ins *inspector) modifyResponse(resp *http.Response) error {
	if resp.Request != nil {
		if inj, ok := resp.Request.Context().Value(injectorKey{}).(Injector); ok {
			if err := inj.Response(resp); err != nil {
				ins.reportRefusal(resp.Request, err)
				return err
			}
			resp.Body = reportCut(resp.Body, func(err error) { ins.reportRefusal(resp.Request, err) })
		}
		if f, ok := resp.Request.Context().Value(onResponseKey{}).(func(int, http.Header)); ok {
			f(resp.StatusCode, resp.Header.Clone())
		}
	}
	for _, h := range ins.in.StripResponseHeaders {
		stripHeader(resp.Header, h)
	}
	if resp.Request != nil && resp.Request.ProtoMajor == 1 && resp.StatusCode != http.StatusSwitchingProtocols {
		resp.Header.Set("Keep-Alive", fmt.Sprintf("timeout=%d", int(keepAliveTimeout/time.Second)-1))
	}
	return nil
}

// reportRefusal reports an injector's refusal of r's response (a
// *StatusError; anything else is not one).
func (ins *inspector) reportRefusal(r *http.Request, err error) {
	var se *StatusError
	if t, _ := r.Context().Value(tunnelKey{}).(*tunnel); t != nil && errors.As(err, &se) {
		ins.s.reportRequest(t, r, se.Reason)
	}
}

// reportCut has report called, once, with the refusal that ends body
// (an injector cut the response off: a real value came back in a form
// it cannot replace). An upgraded stream stays writable.
func reportCut(body io.ReadCloser, report func(error)) io.ReadCloser {
	if body == nil || body == http.NoBody {
		return body
	}
	c := &cutReporter{ReadCloser: body, report: report}
	if w, ok := body.(io.Writer); ok {
		return cutReporterConn{c, w}
	}
	return c
}

type cutReporter struct {
	io.ReadCloser
	report func(error)
	once   sync.Once
}

func (c *cutReporter) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	var se *StatusError
	if errors.As(err, &se) {
		c.once.Do(func() { c.report(err) })
	}
	return n, err
}

type cutReporterConn struct {
	*cutReporter
	w io.Writer
}

func (c cutReporterConn) Write(p []byte) (int, error) { return c.w.Write(p) }

// stripHeader removes every header whose name folds to name's: case
// aside, and '_' and '.' read as '-'.
func stripHeader(h http.Header, name string) {
	want := foldHeader(name)
	for k := range h {
		if foldHeader(k) == want {
			delete(h, k)
		}
	}
}

func foldHeader(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '_' || r == '.':
			return '-'
		case r >= 'A' && r <= 'Z':
			return r + 'a' - 'A'
		}
		return r
	}, s)
}

// upstreamError answers a request that could not be carried upstream.
func (ins *inspector) upstreamError(w http.ResponseWriter, r *http.Request, err error) {
	var se *StatusError
	var re *netfilter.ResolvedError
	switch {
	case errors.As(err, &se):
		w.Header().Set("X-Proxy-Error", "blocked-by-sandbox-runtime")
		http.Error(w, se.Reason, se.Status)
	case errors.As(err, &re):
		t, _ := r.Context().Value(tunnelKey{}).(*tunnel)
		w.Header().Set("X-Proxy-Error", "blocked-by-sandbox-runtime")
		http.Error(w, fmt.Sprintf("Connection to %s blocked: %s", t.host, re.Error()), http.StatusForbidden)
	case errors.Is(err, context.Canceled):
		// The command went away.
	default:
		http.Error(w, "Bad Gateway", http.StatusBadGateway)
	}
}
