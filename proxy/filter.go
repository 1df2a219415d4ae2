package proxy

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// The request filter (spec d.6 filterRequest): a function of the
// library's user that decides on each request the inspecting proxy reads
// — inside terminated tunnels, and plain HTTP — after the policy allowed
// its destination. It may refuse the request, change its headers, and
// watch its response.

// RequestFilter decides on one request. r is the request as the command
// sent it (its body is not shown: Body is empty); info says where it
// goes. It must not keep r. A panic refuses the request.
type RequestFilter func(r *http.Request, info RequestInfo) FilterDecision

// RequestInfo is what a RequestFilter is told besides the request.
type RequestInfo struct {
	// ClientID is the command's (Client.ID).
	ClientID string
	// Scheme is "https" inside a terminated tunnel, "http" for plain HTTP.
	Scheme string
	// SNI is the server name the command's ClientHello asked for.
	SNI string
	// Host (canonical) and Port are the destination the policy allowed.
	Host string
	Port uint16
	// RequestTarget is the request's target as spelled (origin form),
	// NormalizedRequestTarget with dot segments resolved and leading
	// slashes collapsed; Ambiguous says they name different paths.
	RequestTarget, NormalizedRequestTarget string
	Ambiguous                              bool
}

// FilterDecision is a RequestFilter's answer.
type FilterDecision struct {
	// Deny refuses the request with Status (400–599; otherwise 403) and
	// Reason (default "denied by sandbox policy") as its body.
	Deny   bool
	Reason string
	Status int
	// RemoveHeaders and SetHeaders change an allowed request's headers
	// (names in any case; "_" and "." read as "-"); a set header replaces
	// every value of its name. Framing headers (Host, Connection,
	// Content-Length, Transfer-Encoding, …) are never changed. On plain
	// HTTP, a decision that sets headers is refused unless
	// network.allowPlaintextHeaderSet.
	RemoveHeaders []string
	SetHeaders    [][2]string
	// OnResponse, if set, is called with the response's status and
	// headers before they go to the command (stripResponseHeaders not yet
	// applied). It must not block.
	OnResponse func(status int, header http.Header)
}

// AmbiguousTarget modes (network.ambiguousRequestTarget).
const (
	TargetRefuse    = "refuse"
	TargetAsSpelled = "asSpelled"
	TargetNormalize = "normalize"
)

// framingHeaders are never removed or set by a filter.
var framingHeaders = map[string]bool{"host": true, "connection": true, "keep-alive": true, "proxy-connection": true,
	"transfer-encoding": true, "te": true, "trailer": true, "upgrade": true, "content-length": true}

type onResponseKey struct{}

// filterRequest runs the server's filter on r (whose destination t was
// allowed). It returns false when it answered r itself.
func (ins *inspector) filterRequest(w http.ResponseWriter, r *http.Request, t *tunnel) (*http.Request, bool) {
	f := ins.s.Filter
	if f == nil {
		return r, true
	}
	refuse := func(status int, proxyError, reason string) (*http.Request, bool) {
		ins.s.reportRequest(t, r, reason)
		w.Header().Set("X-Proxy-Error", proxyError)
		w.Header().Set("Connection", "close")
		http.Error(w, reason, status)
		return nil, false
	}
	if m := strings.ToUpper(r.Method); m == "TRACE" || m == "TRACK" {
		return refuse(http.StatusMethodNotAllowed, "blocked-by-sandbox-runtime", fmt.Sprintf("the %s method is not forwarded", r.Method))
	}
	spelled, normalized, ok := requestTargets(r)
	if !ok {
		return refuse(http.StatusBadRequest, "blocked-by-sandbox-runtime", "malformed request-target")
	}
	ambiguous := spelled != normalized && spelled != normalized+"?"
	forward := spelled
	switch ins.in.AmbiguousTarget {
	case TargetNormalize:
		forward = normalized
	case TargetAsSpelled:
	default:
		if ambiguous {
			return refuse(http.StatusBadRequest, "ambiguous-request-target",
				`ambiguous request-target: as spelled and normalized it names different paths (a dot segment, leading slashes or "\"); nothing was forwarded (network.ambiguousRequestTarget is "refuse")`)
		}
	}
	info := RequestInfo{Scheme: "http", SNI: t.sni, Host: t.canon.String(), Port: t.port,
		RequestTarget: spelled, NormalizedRequestTarget: normalized, Ambiguous: ambiguous}
	if t.tls {
		info.Scheme = "https"
	}
	if t.client != nil {
		info.ClientID = t.client.ID
	}
	d, err := callFilter(f, r, info)
	if err == nil {
		err = d.check()
	}
	switch {
	case err != nil:
		return refuse(http.StatusForbidden, "blocked-by-sandbox-runtime", err.Error())
	case d.Deny:
		status := d.Status
		if status < 400 || status > 599 {
			status = http.StatusForbidden
		}
		reason := d.Reason
		if reason == "" {
			reason = "denied by sandbox policy"
		}
		return refuse(status, "blocked-by-sandbox-runtime", reason)
	case len(d.SetHeaders) > 0 && !t.tls && !ins.in.AllowPlaintextHeaderSet:
		return refuse(http.StatusForbidden, "blocked-by-sandbox-runtime",
			"the allow decision sets headers, and headers are not set on plain-HTTP requests unless network.allowPlaintextHeaderSet; nothing was forwarded")
	}
	for _, name := range d.RemoveHeaders {
		if !framingHeaders[foldHeader(name)] {
			stripHeader(r.Header, name)
		}
	}
	set := map[string]bool{}
	for _, kv := range d.SetHeaders {
		folded := foldHeader(kv[0])
		if framingHeaders[folded] {
			continue
		}
		if !set[folded] {
			stripHeader(r.Header, kv[0])
			set[folded] = true
		}
		r.Header[http.CanonicalHeaderKey(kv[0])] = append(r.Header[http.CanonicalHeaderKey(kv[0])], kv[1])
	}
	u, err := url.ParseRequestURI(forward)
	if err != nil {
		return refuse(http.StatusBadRequest, "blocked-by-sandbox-runtime", "malformed request-target")
	}
	r.URL.Path, r.URL.RawPath, r.URL.RawQuery, r.URL.ForceQuery = u.Path, u.RawPath, u.RawQuery, u.ForceQuery
	if d.OnResponse != nil {
		r = r.WithContext(context.WithValue(r.Context(), onResponseKey{}, d.OnResponse))
	}
	return r, true
}

// callFilter calls f on a copy of r without its body; a panic is an
// error.
func callFilter(f RequestFilter, r *http.Request, info RequestInfo) (d FilterDecision, err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("sandbox policy check failed: %v", p)
		}
	}()
	c := r.Clone(r.Context())
	c.Body, c.ContentLength = http.NoBody, 0
	return f(c, info), nil
}

// check refuses a decision whose header edits are not valid HTTP.
func (d FilterDecision) check() error {
	for _, n := range d.RemoveHeaders {
		if !validHeaderName(n) {
			return fmt.Errorf("malformed filterRequest decision: removeHeaders holds an invalid header name")
		}
	}
	for _, kv := range d.SetHeaders {
		if !validHeaderName(kv[0]) {
			return fmt.Errorf("malformed filterRequest decision: setHeaders holds an invalid header name")
		}
		if !validHeaderValue(kv[1]) {
			return fmt.Errorf("malformed filterRequest decision: setHeaders holds an invalid header value")
		}
	}
	return nil
}

// requestTargets is r's target as spelled (origin form, without a
// fragment) and normalized (dot segments resolved, runs of leading
// slashes one); ok is false for a target that is neither origin form,
// absolute form nor "*".
func requestTargets(r *http.Request) (spelled, normalized string, ok bool) {
	s := r.RequestURI
	if i := strings.IndexByte(s, '#'); i >= 0 {
		s = s[:i]
	}
	if s == "*" {
		return "*", "*", r.Method == http.MethodOptions
	}
	if i := strings.Index(s, "://"); i > 0 && !strings.HasPrefix(s, "/") {
		rest := s[i+3:]
		j := strings.IndexAny(rest, "/?")
		if j < 0 {
			rest = ""
		} else {
			rest = rest[j:]
		}
		s = rest
	}
	if s == "" || s[0] == '?' {
		s = "/" + s
	}
	for _, c := range []byte(s) {
		if c <= 0x20 || c >= 0x7f {
			return "", "", false
		}
	}
	if s[0] != '/' {
		return "", "", false
	}
	path, query, hasQuery := strings.Cut(s, "?")
	norm := normalizePath(strings.ReplaceAll(path, `\`, "/"))
	if hasQuery {
		norm += "?" + query
	}
	return s, norm, true
}

// normalizePath resolves "." and ".." segments (percent-encoded too) and
// collapses a run of leading slashes, keeping a trailing slash.
func normalizePath(p string) string {
	for strings.HasPrefix(p, "//") {
		p = p[1:]
	}
	segs := strings.Split(p[1:], "/")
	var out []string
	for i, s := range segs {
		switch strings.ToLower(s) {
		case ".", "%2e":
			if i == len(segs)-1 {
				out = append(out, "")
			}
			continue
		case "..", "%2e%2e", ".%2e", "%2e.":
			if len(out) > 0 {
				out = out[:len(out)-1]
			}
			if i == len(segs)-1 {
				out = append(out, "")
			}
			continue
		}
		out = append(out, s)
	}
	p = "/" + strings.Join(out, "/")
	if strings.HasPrefix(p, "//") {
		return normalizePath(p)
	}
	return p
}

// validHeaderName says whether n is an RFC 9110 token.
func validHeaderName(n string) bool {
	if n == "" {
		return false
	}
	for _, c := range []byte(n) {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || strings.IndexByte("!#$%&'*+-.^_`|~", c) >= 0) {
			return false
		}
	}
	return true
}

// validHeaderValue says whether v holds no control character but tab.
func validHeaderValue(v string) bool {
	for _, c := range []byte(v) {
		if c < 0x20 && c != '\t' || c == 0x7f {
			return false
		}
	}
	return true
}
