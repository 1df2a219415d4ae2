package proxy

import (
	"bufio"
	"bytes"
	"io"
	"net/http"
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
			if _, err := netfilter.ParseHost(req.host); err != nil || (req.port == 0 && !req.ask) {
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
