package proxy

import (
	"bufio"
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/textproto"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/srt-go/srt/netfilter"
)

// handleHTTP serves one HTTP proxy connection: a CONNECT tunnel, or one
// absolute-form request (the connection closes after its response). When
// the client is full, the request is answered 503.
func (s *Server) handleHTTP(c net.Conn, client *Client, full bool) {
	c.SetDeadline(time.Now().Add(HandshakeTimeout))
	br := bufio.NewReaderSize(c, maxHead)
	hostHeader, err := peekHostHeader(br)
	if err != nil {
		writeStatus(c, 400, "Bad Request", "", err.Error()+"\n")
		return
	}
	if ins := s.inspect.Load(); ins != nil && !full {
		// Plain requests are read, and each decided, by the inspecting
		// server: it strips response headers and may put credentials in.
		if start, _ := br.Peek(len("CONNECT ")); string(start) != "CONNECT " {
			c.SetDeadline(time.Time{})
			ins.servePlain(c, pending(br), client)
			return
		}
	}
	req, err := http.ReadRequest(br)
	if err != nil {
		writeStatus(c, 400, "Bad Request", "", "malformed request\n")
		return
	}
	if client != nil && client.Credential != nil {
		user, password, ok := parseBasic(req.Header.Get("Proxy-Authorization"))
		if !ok || !client.Credential.matches(user, password) {
			body := "proxy authentication required\n"
			c.SetWriteDeadline(time.Now().Add(HandshakeTimeout))
			fmt.Fprintf(c, "HTTP/1.1 407 Proxy Authentication Required\r\nProxy-Authenticate: Basic realm=\"srt\"\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s", len(body), body)
			return
		}
	}
	target, err := requestTarget(req, hostHeader)
	if err != nil {
		writeStatus(c, 400, "Bad Request", "bad-request-target", err.Error()+"\n")
		return
	}
	protocol := "http"
	if req.Method == http.MethodConnect {
		protocol = "connect"
	}
	if full {
		reason := s.refuse(client, protocol, target.host, target.port)
		writeStatus(c, 503, "Service Unavailable", "too-many-connections", "srt: "+reason+"\n")
		return
	}
	d, p := s.decide(client, protocol, target.host, target.port)
	if !d.Allowed {
		if req.Method == http.MethodConnect {
			// The reason in the status line, as the reference does: curl
			// and git print it.
			writeStatus(c, 403, sanitizeReason(d.Reason), "blocked-by-allowlist", "Connection blocked by network allowlist")
		} else {
			writeStatus(c, 403, "Forbidden", "blocked-by-allowlist", "Connection blocked by network allowlist\n")
		}
		return
	}
	if req.Method == http.MethodConnect {
		if ins, t, refuse := s.terminating(client, protocol, target.host, target.port); ins != nil {
			if !ins.acquire(client, protocol, target.host, target.port) {
				writeStatus(c, 503, "Service Unavailable", "too-many-tunnels", "too many TLS-terminated tunnels at once")
				return
			}
			ins.serveAnswered(c, br, t, func() error {
				_, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n")
				return err
			})
			return
		} else if refuse {
			s.refuseOpaque(client, protocol, target.host, target.port, "this proxy does not tunnel CONNECTs it cannot inspect")
			writeStatus(c, 403, "Forbidden", "blocked-by-sandbox-runtime", "this proxy does not tunnel CONNECTs it cannot inspect")
			return
		}
	}
	up, err := s.dialAllowed(context.Background(), client, p, protocol, target.host, target.port)
	if err != nil {
		var re *netfilter.ResolvedError
		if errors.As(err, &re) {
			phrase := "Forbidden"
			if req.Method == http.MethodConnect {
				phrase = sanitizeReason(re.Error())
			}
			writeStatus(c, 403, phrase, "blocked-by-sandbox-runtime", fmt.Sprintf("Connection to %s blocked: %s\n", target.host, re.Error()))
			return
		}
		writeStatus(c, 502, "Bad Gateway", "", "upstream dial failed\n")
		return
	}
	defer up.Close()
	c.SetDeadline(time.Time{})
	if req.Method == http.MethodConnect {
		if _, err := io.WriteString(c, "HTTP/1.1 200 Connection Established\r\n\r\n"); err != nil {
			return
		}
		s.join(c, up, pending(br))
		return
	}
	RemoveHopByHop(req.Header)
	req.Header.Set("Connection", "close")
	req.RequestURI = ""
	if err := req.Write(up); err != nil {
		writeStatus(c, 502, "Bad Gateway", "", "upstream write failed\n")
		return
	}
	copyStream(c, up)
}

// parseBasic reads "Basic base64(user:password)".
func parseBasic(h string) (user, password string, ok bool) {
	scheme, enc, found := strings.Cut(h, " ")
	if !found || !strings.EqualFold(scheme, "Basic") {
		return "", "", false
	}
	raw, err := base64.StdEncoding.DecodeString(strings.TrimSpace(enc))
	if err != nil {
		return "", "", false
	}
	return strings.Cut(string(raw), ":")
}

// maxHead bounds a request head.
const maxHead = 64 << 10

// peekHostHeader returns the Host header of the request head waiting in
// br, without consuming it (net/http drops the header of an absolute-form
// request, and the proxy must compare it with the target).
func peekHostHeader(br *bufio.Reader) (string, error) {
	for {
		buf := pending(br)
		if end := bytes.Index(buf, []byte("\r\n\r\n")); end >= 0 {
			return hostIn(buf[:end+4]), nil
		}
		if end := bytes.Index(buf, []byte("\n\n")); end >= 0 {
			return hostIn(buf[:end+2]), nil
		}
		if len(buf) >= maxHead {
			return "", errors.New("request head too large")
		}
		if _, err := br.Peek(len(buf) + 1); err != nil {
			return "", errors.New("incomplete request head")
		}
	}
}

func hostIn(head []byte) string {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(head)))
	if _, err := tp.ReadLine(); err != nil {
		return ""
	}
	h, _ := tp.ReadMIMEHeader()
	return h.Get("Host")
}

// target is a decided destination.
type target struct {
	host string // as spelled, without brackets for IPv6
	port uint16
}

// requestTarget extracts the destination of a proxy request. A CONNECT
// names host:port; any other request must be in absolute form
// ("GET http://host/path"), with a Host header that names the same host
// and port, so that the proxy's decision and the origin server cannot
// disagree about the destination.
func requestTarget(req *http.Request, hostHeader string) (target, error) {
	if req.Method == http.MethodConnect {
		return splitTarget(req.RequestURI, 0)
	}
	u := req.URL
	if u == nil || !u.IsAbs() || u.Host == "" {
		return target{}, errors.New("not a proxy request: the target must be an absolute http:// URL")
	}
	if u.Scheme != "http" {
		return target{}, fmt.Errorf("scheme %q cannot be proxied in plain HTTP; use CONNECT", u.Scheme)
	}
	t, err := splitTarget(u.Host, 80)
	if err != nil {
		return target{}, err
	}
	// net/http sets req.Host from the URL and drops the header for an
	// absolute-form request; the origin server may not, so the header
	// itself must agree.
	if hdr := hostHeader; hdr != "" && hdr != u.Host {
		h, err := splitTarget(hdr, 80)
		if err != nil || !sameHost(h, t) {
			return target{}, fmt.Errorf("the Host header %q does not name the request target %q", hdr, u.Host)
		}
	}
	return t, nil
}

// sameHost compares two targets after canonicalisation.
func sameHost(a, b target) bool {
	ha, err1 := netfilter.ParseHost(a.host)
	hb, err2 := netfilter.ParseHost(b.host)
	return err1 == nil && err2 == nil && ha == hb && a.port == b.port
}

// splitTarget parses "host:port" (IPv6 in brackets); defPort applies when
// the port is absent and defPort is not 0.
func splitTarget(s string, defPort uint16) (target, error) {
	if strings.ContainsAny(s, "\x00/@ \t\r\n") {
		return target{}, fmt.Errorf("malformed target %q", s)
	}
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		if defPort == 0 {
			return target{}, fmt.Errorf("malformed target %q: %v", s, err)
		}
		host, port = strings.TrimSuffix(strings.TrimPrefix(s, "["), "]"), strconv.Itoa(int(defPort))
	}
	n, err := strconv.ParseUint(port, 10, 16)
	if err != nil || n == 0 || (len(port) > 1 && port[0] == '0') {
		return target{}, fmt.Errorf("malformed port %q", port)
	}
	if host == "" {
		return target{}, errors.New("empty host")
	}
	return target{host: host, port: uint16(n)}, nil
}

// hopByHop are the headers a proxy must not forward.
var hopByHop = []string{"Connection", "Proxy-Connection", "Keep-Alive", "Proxy-Authenticate", "Proxy-Authorization", "Te", "Trailer", "Transfer-Encoding", "Upgrade"}

// RemoveHopByHop removes the headers a proxy must not forward: the
// hop-by-hop ones, and those the Connection header names.
func RemoveHopByHop(h http.Header) {
	for _, f := range h.Values("Connection") {
		for _, name := range strings.Split(f, ",") {
			h.Del(strings.TrimSpace(name))
		}
	}
	for _, name := range hopByHop {
		h.Del(name)
	}
}

// writeStatus writes a complete response and nothing more; the caller
// closes the connection.
func writeStatus(c net.Conn, code int, phrase, proxyError, body string) {
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP/1.1 %d %s\r\nContent-Type: text/plain\r\nContent-Length: %d\r\nConnection: close\r\n", code, phrase, len(body))
	if proxyError != "" {
		fmt.Fprintf(&b, "X-Proxy-Error: %s\r\n", proxyError)
	}
	b.WriteString("\r\n")
	b.WriteString(body)
	c.SetWriteDeadline(time.Now().Add(HandshakeTimeout))
	io.WriteString(c, b.String())
}

// sanitizeReason makes a reason safe for a status line (spec d.3): as
// sanitizeViolationText does, and what is not printable ASCII becomes
// '?'. An empty result is "Forbidden".
func sanitizeReason(s string) string {
	if out := sanitize(s, true); out != "" {
		return out
	}
	return "Forbidden"
}

// sanitizeViolationText makes an ask callback's reason safe for a
// violation line (spec h): runs of control and invisible characters
// become one space, '<' and '>' go, the text is trimmed and cut to 500
// characters. It may be empty.
func sanitizeViolationText(s string) string { return sanitize(s, false) }

// sanitize is both: with ascii, what is not printable ASCII becomes '?'.
func sanitize(s string, ascii bool) string {
	var b strings.Builder
	space, n := false, 0
	for _, r := range s {
		if n >= 500 {
			break
		}
		switch {
		case r == '<' || r == '>':
			continue
		case r <= 0x20 || r == 0x7f || r == utf8.RuneError || (r >= 0x80 && r < 0xa0) || unicode.IsControl(r) || unicode.Is(unicode.Cf, r) || unicode.IsSpace(r):
			if !space {
				b.WriteByte(' ')
				space = true
				n++
			}
			continue
		case ascii && r > 0x7e:
			b.WriteByte('?')
		default:
			b.WriteRune(r)
		}
		space = false
		n++
	}
	return strings.TrimSpace(b.String())
}
