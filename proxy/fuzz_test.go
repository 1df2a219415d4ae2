package proxy

import (
	"bufio"
	"bytes"
	"crypto/tls"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/srt-go/srt/netfilter"
)

// FuzzReadSOCKS: any bytes from a client give a request or an error, and
// an accepted request names a host the canonicaliser accepts and a port.
func FuzzReadSOCKS(f *testing.F) {
	f.Add([]byte{5, 1, 0, 5, 1, 0, 1, 127, 0, 0, 1, 0, 80})
	f.Add([]byte{5, 1, 0, 5, 1, 0, 3, 9, 'n', 'a', 'm', 'e', '.', 't', 'e', 's', 't', 1, 187})
	f.Add([]byte{5, 1, 0, 5, 1, 0, 4, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 127, 0, 0, 1, 0, 22})
	f.Add([]byte{5, 2, 2, 0, 5, 2, 0, 3, 3, 'a', 0, 'b', 0, 1})
	f.Add([]byte{5, 1, 2, 1, 3, 's', 'r', 't', 2, 'p', 'w', 5, 1, 0, 1, 127, 0, 0, 1, 0, 80})
	cred := &Credential{User: "srt", Password: "pw"}
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, c := range []*Credential{nil, cred} {
			req, err := readSOCKS(bufio.NewReader(bytes.NewReader(data)), io.Discard, c)
			if err != nil {
				continue
			}
			if _, err := netfilter.ParseHost(req.host); err != nil || req.port == 0 {
				t.Fatalf("accepted %+v: %v", req, err)
			}
			if c != nil && !bytes.Contains(data, []byte{3, 's', 'r', 't', 2, 'p', 'w'}) {
				t.Fatalf("accepted %+v without the credential", req)
			}
		}
	})
}

// FuzzHTTPRequestTarget: the request parsing path of the HTTP proxy never
// panics, and an accepted target has a port and a Host header that agrees.
func FuzzHTTPRequestTarget(f *testing.F) {
	for _, s := range []string{
		"CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n",
		"GET http://example.com/x HTTP/1.1\r\nHost: example.com\r\n\r\n",
		"GET http://[::1]:8080/ HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
		"GET http://2130706433/ HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
		"GET http://a.test/ HTTP/1.1\r\nHost: b.test\r\n\r\n",
		"CONNECT a\x00b:1 HTTP/1.1\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		br := bufio.NewReaderSize(bytes.NewReader(data), maxHead)
		host, err := peekHostHeader(br)
		if err != nil {
			return
		}
		req, err := http.ReadRequest(br)
		if err != nil {
			return
		}
		tg, err := requestTarget(req, host)
		if err != nil {
			return
		}
		if tg.port == 0 || tg.host == "" {
			t.Fatalf("accepted %+v", tg)
		}
	})
}

// checkNameIn asserts what nameIn promises of any bytes: it reads none
// past them (its answer does not depend on what lies after them in
// memory), returns a name only if the canonicaliser accepts it and the
// stream is complete, and a complete answer stays the same whatever
// follows. It returns the answer.
func checkNameIn(t *testing.T, data []byte) string {
	name, complete, err := nameIn(data[:len(data):len(data)])
	for _, fill := range []byte{0x00, 0xff, recordHandshake} {
		buf := append(bytes.Clone(data), bytes.Repeat([]byte{fill}, 256)...)
		n, c, e := nameIn(buf[:len(data)])
		if n != name || c != complete || (e == nil) != (err == nil) {
			t.Fatalf("the answer depends on the bytes after the input (fill %#x): %q %v %v, then %q %v %v", fill, name, complete, err, n, c, e)
		}
	}
	if name != "" {
		if _, perr := netfilter.ParseHost(name); perr != nil || err != nil || !complete {
			t.Fatalf("name %q (complete %v, err %v) that the canonicaliser refuses: %v", name, complete, err, perr)
		}
	}
	if !complete && (name != "" || err != nil) {
		t.Fatalf("an answer from an incomplete stream: %q %v", name, err)
	}
	if complete {
		more := append(bytes.Clone(data), "\r\n\r\nGET / HTTP/1.1\r\nHost: other.test\r\n\r\n"...)
		if n, c, e := nameIn(more); n != name || !c || (e == nil) != (err == nil) {
			t.Fatalf("complete answer %q %v changed with more bytes: %q %v %v", name, err, n, c, e)
		}
	}
	return name
}

// FuzzSNI: the ClientHello parser of the transparent path, on anything a
// command sends first. A name it finds is bytes of the input.
func FuzzSNI(f *testing.F) {
	for _, cfg := range []*tls.Config{
		{ServerName: "allowed.test"},
		{ServerName: "allowed.test", MaxVersion: tls.VersionTLS12},
		{InsecureSkipVerify: true},
	} {
		f.Add(clientHello(f, cfg))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		name := checkNameIn(t, data)
		if len(data) > 0 && data[0] == recordHandshake && !bytes.Contains(data, []byte(name)) {
			t.Fatalf("SNI %q is not in the ClientHello", name)
		}
	})
}

// FuzzHostHeader: the HTTP Host peek of the transparent path, on
// anything a command sends first.
func FuzzHostHeader(f *testing.F) {
	for _, s := range []string{
		"GET / HTTP/1.1\r\nHost: allowed.test\r\n\r\n",
		"GET http://url.test/ HTTP/1.1\r\nHost: header.test\r\n\r\n",
		"GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) { checkNameIn(t, data) })
}

// The request filter's targets: never a panic; the normalized form has no
// dot segment and no run of leading slashes, and is its own normal form.
func FuzzRequestTargets(f *testing.F) {
	f.Add("GET", "/a/../b")
	f.Add("OPTIONS", "*")
	f.Add("GET", "http://h/x?y#z")
	f.Fuzz(func(t *testing.T, method, target string) {
		r := &http.Request{Method: method, RequestURI: target}
		spelled, normalized, ok := requestTargets(r)
		if !ok || spelled == "*" {
			return
		}
		path, _, _ := strings.Cut(normalized, "?")
		for _, seg := range strings.Split(path, "/") {
			if l := strings.ToLower(seg); l == "." || l == ".." || l == "%2e" || l == "%2e%2e" || l == ".%2e" || l == "%2e." {
				t.Fatalf("%q normalized to %q, which keeps a dot segment", target, normalized)
			}
		}
		if strings.HasPrefix(normalized, "//") {
			t.Fatalf("%q normalized to %q", target, normalized)
		}
		if again := normalizePath(path); again != path {
			t.Fatalf("normalizing %q again gives %q", path, again)
		}
	})
}

// requireHostMatch's comparison: never a panic, and an authority that
// names the target does so however it is spelled (case, default port).
func FuzzNamesTarget(f *testing.F) {
	f.Add("Example.COM", "example.com", uint16(443))
	f.Add("[::1]:8443", "::1", uint16(8443))
	f.Fuzz(func(t *testing.T, authority, host string, port uint16) {
		if port == 0 {
			return
		}
		tg := target{host: host, port: port}
		if namesTarget(authority, tg, 443) {
			if _, err := netfilter.ParseHost(host); err != nil {
				t.Fatalf("%q names the malformed host %q", authority, host)
			}
		}
	})
}
