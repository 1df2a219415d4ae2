package proxy

import (
	"io"
	"net/http"
	"strings"
	"sync"
	"testing"
	"testing/iotest"

	"github.com/srt-go/srt/netfilter"
)

// cutInjector refuses the response to /refuse, and cuts every other body
// off after "before".
type cutInjector struct{}

func (cutInjector) Request(*http.Request) error { return nil }

func (cutInjector) Response(resp *http.Response) error {
	if resp.Request.URL.Path == "/refuse" {
		return &StatusError{Status: http.StatusBadGateway, Reason: "refused by the test"}
	}
	resp.Body = io.NopCloser(io.MultiReader(strings.NewReader("before"), iotest.ErrReader(&StatusError{Status: http.StatusBadGateway, Reason: "cut off by the test"})))
	resp.ContentLength = -1
	resp.Header.Del("Content-Length")
	return nil
}

func (cutInjector) ResponseHeader(http.Header) error { return nil }

// An injector's refusals are the user's to see: a body it cuts off (a
// real value came back in a form it cannot replace) ends the transfer
// with an error, not as a whole body, and a response it refuses is
// answered 502; the proxy reports both, over HTTP/1.1 and HTTP/2.
func TestInjectorRefusalsReported(t *testing.T) {
	s, httpAddr, _, ca, port := terminating(t, &Inspection{}, func(netfilter.Host, bool) Injector { return cutInjector{} })
	var mu sync.Mutex
	var refused []string
	s.OnDecision = func(d Decision) {
		mu.Lock()
		defer mu.Unlock()
		if !d.Allowed {
			refused = append(refused, d.Host+" ("+d.Reason+")")
		}
	}
	for _, h2 := range []bool{false, true} {
		c := client("http://"+httpAddr, ca, h2)
		resp, err := c.Get("https://example.com:" + port + "/cut")
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err == nil || string(body) != "before" {
			t.Errorf("h2 %v: a body cut off read %q, %v; want \"before\" and an error", h2, body, err)
		}
		resp, err = c.Get("https://example.com:" + port + "/refuse")
		if err != nil {
			t.Fatal(err)
		}
		body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadGateway || !strings.Contains(string(body), "refused by the test") {
			t.Errorf("h2 %v: a refused response: %d %q", h2, resp.StatusCode, body)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	want := []string{
		"GET https://example.com:" + port + "/cut (cut off by the test)", "GET https://example.com:" + port + "/refuse (refused by the test)",
	}
	if len(refused) != 4 || refused[0] != want[0] || refused[1] != want[1] || refused[2] != want[0] || refused[3] != want[1] {
		t.Errorf("reported: %q, want %q twice", refused, want)
	}
}
