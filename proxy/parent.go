package proxy

import (
	"bufio"
	"context"
	"encoding/base64"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Parent is an upstream proxy the policy proxies dial through, after the
// policy has decided (spec d.6).
type Parent struct {
	HTTP  *url.URL // for plain HTTP requests
	HTTPS *url.URL // for CONNECT and SOCKS tunnels; falls back to HTTP
	// NoProxy is the bypass list: "*", CIDRs, and names that match
	// themselves and their subdomains ("x" and ".x" alike). Loopback and
	// localhost always bypass.
	NoProxy []string
}

// ParseParent builds a Parent from URLs (schemeless "host:port" means
// http) and a NO_PROXY string. Empty URLs mean none.
func ParseParent(httpURL, httpsURL, noProxy string) (*Parent, error) {
	p := &Parent{}
	for _, u := range []struct {
		raw string
		dst **url.URL
	}{{httpURL, &p.HTTP}, {httpsURL, &p.HTTPS}} {
		if u.raw == "" {
			continue
		}
		raw := u.raw
		if !strings.Contains(raw, "://") {
			raw = "http://" + raw
		}
		parsed, err := url.Parse(raw)
		if err != nil || parsed.Host == "" || (parsed.Scheme != "http" && parsed.Scheme != "https") {
			return nil, fmt.Errorf("parent proxy %q: want an http:// or https:// URL", u.raw)
		}
		*u.dst = parsed
	}
	if p.HTTPS == nil {
		p.HTTPS = p.HTTP
	}
	for _, e := range strings.Split(noProxy, ",") {
		if e = strings.TrimSpace(strings.ToLower(e)); e != "" {
			p.NoProxy = append(p.NoProxy, e)
		}
	}
	if p.HTTP == nil && p.HTTPS == nil {
		return nil, nil
	}
	return p, nil
}

// bypass reports whether host is reached directly.
func (p *Parent) bypass(host string) bool {
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	addr, isAddr := netip.ParseAddr(host)
	if host == "localhost" || strings.HasSuffix(host, ".localhost") || (isAddr == nil && addr.IsLoopback()) {
		return true
	}
	for _, e := range p.NoProxy {
		switch {
		case e == "*":
			return true
		case strings.Contains(e, "/"):
			if pfx, err := netip.ParsePrefix(e); err == nil && isAddr == nil && pfx.Contains(addr.Unmap()) {
				return true
			}
		default:
			e = strings.TrimPrefix(e, ".")
			if host == e || strings.HasSuffix(host, "."+e) {
				return true
			}
		}
	}
	return false
}

// via returns the parent to use for host, or nil.
func (p *Parent) via(host string, plain bool) *url.URL {
	if p == nil || p.bypass(host) {
		return nil
	}
	if plain {
		return p.HTTP
	}
	return p.HTTPS
}

// dialParent opens a CONNECT tunnel to host:port through the parent u.
func dialParent(ctx context.Context, dial func(context.Context, string, string) (net.Conn, error), u *url.URL, host string, port uint16) (net.Conn, error) {
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), map[string]string{"http": "80", "https": "443"}[u.Scheme])
	}
	c, err := dial(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("parent proxy %s: %w", u.Host, err)
	}
	auth := ""
	if u.User != nil {
		pw, _ := u.User.Password()
		auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(u.User.Username()+":"+pw))
	}
	return connectThrough(c, "parent proxy "+u.Host, host, port, auth)
}

// connectThrough asks the proxy at the other end of c (called name in
// errors) for a tunnel to host:port with an HTTP CONNECT, and returns the
// tunnel; c is closed on failure. Bytes the proxy sent after its answer
// are the tunnel's first.
func connectThrough(c net.Conn, name, host string, port uint16, auth string) (net.Conn, error) {
	target := net.JoinHostPort(host, strconv.Itoa(int(port)))
	req := "CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n"
	if auth != "" {
		req += "Proxy-Authorization: " + auth + "\r\n"
	}
	c.SetDeadline(time.Now().Add(DialTimeout))
	defer c.SetDeadline(time.Time{})
	if _, err := c.Write([]byte(req + "\r\n")); err != nil {
		c.Close()
		return nil, err
	}
	br := bufio.NewReaderSize(c, 16<<10)
	resp, err := http.ReadResponse(br, &http.Request{Method: http.MethodConnect})
	if err != nil {
		c.Close()
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	if resp.StatusCode/100 != 2 {
		c.Close()
		return nil, fmt.Errorf("%s refused %s: %s", name, target, resp.Status)
	}
	if head := pending(br); len(head) > 0 {
		return &prefixConn{Conn: c, head: append([]byte(nil), head...), closed: make(chan struct{})}, nil
	}
	return c, nil
}
