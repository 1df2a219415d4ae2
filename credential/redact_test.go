package credential

import (
	"encoding/base64"
	"encoding/hex"
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

// An encoded form of a real value (base64 at any alignment, hex in
// either case) is written as a note, never as it is.
func TestRedactingForms(t *testing.T) {
	real := "FORMS-" + NewSentinel(24)
	p, err := Build(Input{Credentials: &config.Credentials{EnvVars: []config.CredentialEnvVar{{Name: "FORMTOKEN", CredentialRule: config.CredentialRule{Mode: "mask"}}}},
		Env: []string{"FORMTOKEN=" + real}})
	if err != nil {
		t.Fatal(err)
	}
	_ = p
	for _, form := range []string{
		base64.StdEncoding.EncodeToString([]byte(real)),
		base64.StdEncoding.EncodeToString([]byte("a" + real)),
		base64.URLEncoding.EncodeToString([]byte("ab" + real)),
		strings.ToUpper(hex.EncodeToString([]byte(real))),
	} {
		var out strings.Builder
		w := Redacting(&out)
		line := "log: got " + form + " from upstream\n"
		w.Write([]byte(line[:len(line)/2]))
		w.Write([]byte(line[len(line)/2:]))
		if strings.Contains(out.String(), form[4:len(form)-4]) || !strings.Contains(out.String(), "FORMTOKEN") {
			t.Errorf("%q written as %q", line, out.String())
		}
	}
}
