package credential

import (
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
)

// Every real value a plan masks is written as its sentinel through
// Redacting, whole or split across writes, and nothing else changes.
func TestRedacting(t *testing.T) {
	real := "REDACT-ME-" + NewSentinel(20)
	p, err := Build(Input{Credentials: &config.Credentials{EnvVars: []config.CredentialEnvVar{{Name: "TOKEN", CredentialRule: config.CredentialRule{Mode: "mask"}}}},
		Env: []string{"TOKEN=" + real}})
	if err != nil || len(p.Secrets) != 1 {
		t.Fatal(p, err)
	}
	sentinel := p.Secrets[0].Sentinel
	var out strings.Builder
	w := Redacting(&out)
	if Redacting(w) != w {
		t.Error("a redactor wrapped again")
	}
	for _, chunks := range [][]string{
		{"whole " + real + " line\n"},
		{"split " + real[:7], real[7:] + "\n"},
		{"byte by byte "},
		{"a prefix that ends " + real[:5], " otherwise\n"},
	} {
		out.Reset()
		for _, c := range chunks {
			if c == "byte by byte " {
				for i := range len(real) {
					w.Write([]byte{real[i]})
				}
				w.Write([]byte("\n"))
			}
			w.Write([]byte(c))
		}
		w.Write([]byte("\n"))
		got := out.String()
		want := strings.ReplaceAll(strings.Join(chunks, ""), real, sentinel)
		if chunks[0] == "byte by byte " {
			want = sentinel + "\nbyte by byte "
		}
		if strings.Contains(got, real) || !strings.HasPrefix(got, want) {
			t.Errorf("wrote %q, got %q, want %q", chunks, got, want)
		}
	}
}
