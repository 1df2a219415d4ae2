package credential

import (
	"bytes"
	"compress/gzip"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/iotest"
	"time"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/leakcheck"
)

// Issue #34 item 3, "secrets that come back": a host that stored the
// real value srt put into a request gives it back later, transformed by
// one of the encodings servers use. The tests play that host, and judge
// what the command would read with leakcheck, which decodes every form
// rather than sharing the search's encoders.

// comeback is a plan with three masked values: a common token, one with
// every character that encodings treat specially, and one of the
// shortest length searched for.
func comeback(t *testing.T) (*Plan, []Secret) {
	t.Helper()
	p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{envVar("TOKEN", "mask"), envVar("SPECIAL", "mask"), envVar("SHORT", "mask")}},
		[]string{"TOKEN=ghp_0123456789abcdefghijABCDEFGHIJklmn", "SPECIAL=" + `k/+=Q"<&>\ é~*'()` + "\x01\tz", "SHORT=Ab+/9x~Z"}, nil)
	if len(p.Secrets) != 3 {
		t.Fatalf("secrets: %d", len(p.Secrets))
	}
	return p, p.Secrets
}

// forms are a value as it is and in every encoded form.
func forms(real string) []leakcheck.Form {
	return append([]leakcheck.Form{{Name: "as it is", Text: []byte(real)}}, leakcheck.Forms([]byte(real))...)
}

// readAll reads r to its end; err is nil at EOF.
func readAll(r io.Reader) ([]byte, error) {
	var out []byte
	buf := make([]byte, 1000)
	for {
		n, err := r.Read(buf)
		out = append(out, buf[:n]...)
		if err == io.EOF {
			return out, nil
		}
		if err != nil {
			return out, err
		}
	}
}

// splits are the ways a body comes: whole, a byte at a time, and in two
// reads at every point.
func splits(body []byte) map[string]func() io.Reader {
	out := map[string]func() io.Reader{
		"whole":            func() io.Reader { return bytes.NewReader(body) },
		"a byte at a time": func() io.Reader { return iotest.OneByteReader(bytes.NewReader(body)) },
	}
	for i := 1; i < len(body); i++ {
		out[fmt.Sprintf("split at %d", i)] = func() io.Reader {
			return io.MultiReader(iotest.OneByteReader(bytes.NewReader(body[:i])), bytes.NewReader(body[i:]))
		}
	}
	return out
}

// A stored value comes back in a later response's body, as it is or
// encoded, at every alignment and split between reads anywhere: the
// command reads it in no form. As it is, it is its sentinel; encoded, the
// body is cut off before it, with an error the proxy reports.
func TestStoredValueComesBackEncoded(t *testing.T) {
	p, secrets := comeback(t)
	for _, h := range []string{"api.example.com", "other.test"} {
		inj := p.Injector().For(host(t, h), true)
		for _, s := range secrets {
			for _, f := range forms(s.Real) {
				body := append(append([]byte("stored="), f.Text...), "&after=1"...)
				for how, src := range splits(body) {
					resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(src())}
					if err := inj.Response(resp); err != nil {
						t.Fatalf("%s: %v", h, err)
					}
					out, err := readAll(resp.Body)
					if form := leakcheck.Find(out, s.Real); form != "" {
						t.Fatalf("%s, %s %s, %s: the command read it %s: %q", h, s.Name, f.Name, how, form, out)
					}
					if f.Name == "as it is" {
						if err != nil || !bytes.Contains(out, []byte(s.Sentinel)) {
							t.Fatalf("%s, %s as it is, %s: %q, %v; want its sentinel", h, s.Name, how, out, err)
						}
					} else if err == nil {
						t.Fatalf("%s, %s %s, %s: the body ended as if whole: %q", h, s.Name, f.Name, how, out)
					}
				}
			}
		}
	}
}

// Everywhere else a response carries text: its headers, an
// informational response's, its trailers, a gzip body, a header's name.
func TestStoredValueComesBackElsewhere(t *testing.T) {
	p, secrets := comeback(t)
	inj := p.Injector().For(host(t, "api.example.com"), true)
	flat := func(h http.Header) []byte {
		var b bytes.Buffer
		h.Write(&b)
		return b.Bytes()
	}
	for _, s := range secrets {
		for _, f := range forms(s.Real)[1:] {
			what := s.Name + " " + f.Name
			// A final response's header: the response is refused.
			resp := &http.Response{StatusCode: 200, Header: http.Header{"X-Stored": {"v=" + string(f.Text)}}, Body: http.NoBody}
			if err := inj.Response(resp); err == nil {
				if form := leakcheck.Find(flat(resp.Header), s.Real); form != "" {
					t.Errorf("%s in a header: the command read it %s", what, form)
				}
			}
			// A 1xx response's header: dropped.
			hdr := http.Header{"Link": {"<" + string(f.Text) + ">"}, "X-Fine": {"1"}}
			inj.ResponseHeader(hdr)
			if form := leakcheck.Find(flat(hdr), s.Real); form != "" {
				t.Errorf("%s in a 1xx header: the command read it %s", what, form)
			}
			// A trailer: the body ends with an error instead.
			resp = &http.Response{StatusCode: 200, Header: http.Header{}, Trailer: http.Header{}}
			resp.Body = io.NopCloser(&atEOF{r: strings.NewReader("body"), f: func() { resp.Trailer.Set("Grpc-Message", string(f.Text)) }})
			if err := inj.Response(resp); err != nil {
				t.Fatal(err)
			}
			if _, err := readAll(resp.Body); err == nil {
				if form := leakcheck.Find(flat(resp.Trailer), s.Real); form != "" {
					t.Errorf("%s in a trailer: the command read it %s", what, form)
				}
			}
			// A gzip body, decoded and searched.
			var gz bytes.Buffer
			z := gzip.NewWriter(&gz)
			z.Write(append([]byte("x"), f.Text...))
			z.Close()
			resp = &http.Response{StatusCode: 200, Header: http.Header{"Content-Encoding": {"gzip"}}, Body: io.NopCloser(&gz)}
			if err := inj.Response(resp); err != nil {
				t.Fatal(err)
			}
			out, err := readAll(resp.Body)
			if form := leakcheck.Find(out, s.Real); form != "" || err == nil {
				t.Errorf("%s gzipped: the command read it %q (%v)", what, form, err)
			}
		}
		// A header's name, canonicalized: hex survives that.
		resp := &http.Response{StatusCode: 200, Header: http.Header{http.CanonicalHeaderKey("X-" + hex.EncodeToString([]byte(s.Real))): {"1"}}, Body: http.NoBody}
		if err := inj.Response(resp); err == nil {
			if form := leakcheck.Find(flat(resp.Header), s.Real); form != "" {
				t.Errorf("%s in a header's name: the command read it %s", s.Name, form)
			}
		}
	}
}

// Searching does not hold back what cannot start a value: a stream of
// Server-Sent Events gets each event as it comes, not when the next
// one does (an event ends with a blank line, which starts no form).
func TestSearchKeepsStreamsFlowing(t *testing.T) {
	p, _ := comeback(t)
	inj := p.Injector().For(host(t, "api.example.com"), true)
	pr, pw := io.Pipe()
	defer pw.Close()
	resp := &http.Response{StatusCode: 200, Header: http.Header{"Content-Type": {"text/event-stream"}}, Body: pr}
	if err := inj.Response(resp); err != nil {
		t.Fatal(err)
	}
	for _, event := range []string{"event: delta\ndata: {\"text\":\"hello\"}\n\n", "data: [DONE]\n\n"} {
		go pw.Write([]byte(event))
		got := make(chan string)
		go func() {
			var b []byte
			buf := make([]byte, 100)
			for len(b) < len(event) {
				n, err := resp.Body.Read(buf)
				b = append(b, buf[:n]...)
				if err != nil {
					break
				}
			}
			got <- string(b)
		}()
		select {
		case g := <-got:
			if g != event {
				t.Errorf("event %q read as %q", event, g)
			}
		case <-time.After(2 * time.Second):
			t.Fatalf("the event %q was held back until the next one", event)
		}
	}
}

// A long value (a key file masked whole) is found in every form too,
// where the search looks at the fewest places (its stride is capped).
func TestLongValueComesBack(t *testing.T) {
	var real strings.Builder
	for i := range 300 {
		real.WriteByte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/=\n"[i*7%66])
	}
	p := build(t, &config.Credentials{EnvVars: []config.CredentialEnvVar{envVar("KEY", "mask")}}, []string{"KEY=" + real.String()}, nil)
	inj := p.Injector().For(host(t, "api.example.com"), true)
	for _, f := range forms(real.String()) {
		body := append(append([]byte(strings.Repeat("x", 1000)), f.Text...), strings.Repeat("y", 1000)...)
		for how, src := range map[string]io.Reader{"whole": bytes.NewReader(body), "a byte at a time": iotest.OneByteReader(bytes.NewReader(body))} {
			resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(src)}
			if err := inj.Response(resp); err != nil {
				t.Fatal(err)
			}
			out, err := readAll(resp.Body)
			if form := leakcheck.Find(out, real.String()); form != "" || (err == nil) != (f.Name == "as it is") {
				t.Errorf("%s, %s: the command read it %q (%v)", f.Name, how, form, err)
			}
		}
	}
}
