package credential

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/srt-go/srt/config"
)

// Substitution over a stream, whatever the reads' sizes, is the same as
// over the whole: a sentinel that straddles two reads (or a chunk of a
// chunked body) is replaced all the same.
func FuzzReplaceStream(f *testing.F) {
	f.Add([]byte("xxfake_value_aaaayy"), "fake_value_aaaa", "REAL", "aa", "B", uint8(3))
	f.Add([]byte("fake_value_aaaafake_value_aaa"), "fake_value_aaaa", "", "fake_value_aaa", "Z", uint8(1))
	f.Fuzz(func(t *testing.T, body []byte, old1, new1, old2, new2 string, chunk uint8) {
		var pairs []pair
		for _, p := range [][2]string{{old1, new1}, {old2, new2}} {
			if p[0] != "" {
				pairs = append(pairs, pair{[]byte(p[0]), []byte(p[1])})
			}
		}
		if len(pairs) == 0 {
			return
		}
		r := newReplacer(pairs)
		want := r.replace(body)
		n := int(chunk)%17 + 1
		got, err := io.ReadAll(r.reader(iotest.HalfReader(chunkReader(string(body), n))))
		if err != nil || !bytes.Equal(got, want) {
			t.Fatalf("chunks of %d: got %q, want %q (%v)", n, got, want, err)
		}
	})
}

// A token decodes or is refused without panicking; a masked token never
// holds the real one's signature or a masked claim's value.
func FuzzJWT(f *testing.F) {
	f.Add(jwt(`{"alg":"RS256"}`, `{"sub":"user42","n":1}`), "sub")
	f.Add("eyJhbGciOiJIUzI1NiJ9.e30.sig", "x")
	f.Add("a.b.c", "")
	f.Fuzz(func(t *testing.T, token, claim string) {
		claims := []string{claim}
		newSecret := func(suffix, real string) Secret { return Secret{Sentinel: NewSentinel(len(real)), Real: real} }
		for _, cs := range []*[]string{nil, &claims} {
			masked, secrets, ok := maskJWT(token, cs, newSecret, "")
			if !ok {
				continue
			}
			parts := strings.Split(token, ".")
			if sig := parts[2]; len(sig) > 3 && strings.HasSuffix(masked, "."+sig) {
				t.Fatalf("the masked token keeps the real signature: %q", masked)
			}
			if _, _, ok := decodeJWT(masked); !ok {
				t.Fatalf("the masked token %q does not read as a token", masked)
			}
			// A masked value of 8 bytes or more is in no string of the
			// masked token's header or payload (shorter ones, like the
			// search of responses, only where the claim was).
			header, pl, _ := decodeJWT(masked)
			hb, _ := b64.DecodeString(strings.TrimRight(header, "="))
			for _, s := range secrets[1:] {
				esc, _ := json.Marshal(s.Real)
				esc = esc[1 : len(esc)-1]
				if len(s.Real) < minScrubbed || strings.Contains(s.Sentinel, s.Real) {
					continue
				}
				for _, lit := range jsonStrings(append(hb, pl...)) {
					if bytes.Contains(lit, esc) {
						t.Fatalf("claim value %q is still in %s %s", s.Real, hb, pl)
					}
				}
			}
		}
	})
}

// extract: masking, then putting every secret back, gives the value
// again; and no captured secret is left in the masked value.
func FuzzExtract(f *testing.F) {
	f.Add("postgres://bob:hunter2@db:5432/x", `://[^:]+:([^@]+)@`, false)
	f.Add(`{"password":"p1","copy":"p1"}`, `"password":"([^"]+)"`, true)
	f.Add("aaaa", `(a)`, true)
	f.Fuzz(func(t *testing.T, value, pattern string, duplicates bool) {
		rule := config.CredentialRule{Mode: "mask", Extract: pattern}
		masked, secrets, err := mask(value, rule, nil, "f", duplicates)
		if err != nil {
			return
		}
		var pairs []pair
		for _, s := range secrets {
			pairs = append(pairs, pair{[]byte(s.Sentinel), []byte(s.Real)})
			if len(s.Real) >= 4 && strings.Contains(masked, s.Real) && !strings.Contains(value, s.Sentinel) {
				// A secret may appear in the rest of the value only where
				// the pattern did not capture it and duplicates is off.
				if duplicates {
					t.Fatalf("maskDuplicates left %q in %q", s.Real, masked)
				}
			}
		}
		if back := string(newReplacer(pairs).replace([]byte(masked))); back != value && !sentinelLike(value) {
			t.Fatalf("restoring %q gives %q, not %q", masked, back, value)
		}
	})
}

// sentinelLike: a value that itself holds sentinel text, which the
// round trip cannot tell from srt's.
func sentinelLike(v string) bool { return strings.Contains(v, sentinelPrefix) }

// jsonStrings returns the string literals of a JSON text, quotes and
// escapes as written.
func jsonStrings(text []byte) [][]byte {
	var out [][]byte
	for i := 0; i < len(text); i++ {
		if text[i] != '"' {
			continue
		}
		j := i + 1
		for j < len(text) && text[j] != '"' {
			if text[j] == '\\' {
				j++
			}
			j++
		}
		out = append(out, text[i:min(j+1, len(text))])
		i = j
	}
	return out
}
