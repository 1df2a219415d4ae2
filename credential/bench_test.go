package credential

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"testing"

	"github.com/srt-go/srt/netfilter"
)

// What searching a response for the real values costs, per MiB of body
// (ns/op is per MiB): a body of text and one of base64 characters (the
// search's worst case: every character may start an encoded value), for
// one and for four masked values of 40 bytes, beside "none" (no value
// long enough to search for: the body is copied as it is).
// go test ./credential -run '^$' -bench ResponseSearch -count 6
func BenchmarkResponseSearch(b *testing.B) {
	const size = 1 << 20
	rng := rand.New(rand.NewPCG(1, 2))
	fill := func(alphabet string) []byte {
		out := make([]byte, size)
		for i := range out {
			out[i] = alphabet[rng.IntN(len(alphabet))]
		}
		return out
	}
	bodies := []struct {
		name string
		data []byte
	}{
		{"text", fill("etaoinshrdlucmfwypvbgkqjxz      ETAOIN,.\n\"{}:0123456789")},
		{"base64", fill("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/")},
	}
	secrets := func(n, length int) []Secret {
		var out []Secret
		for i := range n {
			real := make([]byte, length)
			for j := range real {
				real[j] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_/+"[rng.IntN(65)]
			}
			out = append(out, Secret{Name: fmt.Sprintf("env:S%d", i), Sentinel: NewSentinel(length), Real: string(real)})
		}
		return out
	}
	h, _ := netfilter.ParseHost("api.example.com")
	for _, body := range bodies {
		for _, tc := range []struct {
			name    string
			secrets []Secret
		}{{"none", secrets(1, 4)}, {"one", secrets(1, 40)}, {"four", secrets(4, 40)}} {
			inj := (&Plan{Secrets: tc.secrets}).Injector().For(h, true)
			b.Run(body.name+"/"+tc.name, func(b *testing.B) {
				b.SetBytes(size)
				for b.Loop() {
					resp := &http.Response{StatusCode: 200, Header: http.Header{}, Body: io.NopCloser(bytes.NewReader(body.data))}
					if inj != nil {
						if err := inj.Response(resp); err != nil {
							b.Fatal(err)
						}
					}
					if n, err := io.CopyBuffer(io.Discard, onlyReader{resp.Body}, make([]byte, 32<<10)); n != size || err != nil {
						b.Fatalf("copied %d bytes: %v", n, err)
					}
				}
			})
		}
	}
}

// onlyReader hides every method but Read (io.Copy reads as the proxy does).
type onlyReader struct{ r io.Reader }

func (o onlyReader) Read(p []byte) (int, error) { return o.r.Read(p) }
