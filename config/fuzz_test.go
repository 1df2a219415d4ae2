package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
)

// FuzzParse feeds arbitrary documents to the settings parser: it must never
// panic, and what it accepts must survive a round trip through JSON.
func FuzzParse(f *testing.F) {
	for _, name := range []string{"reference-full.json", "every-field.json"} {
		data, err := os.ReadFile(filepath.Join("testdata", name))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Add([]byte(`{}`))
	f.Add([]byte(`{"network":{"allowedDomains":["a.b"],"deniedDomains":["*"]},"filesystem":{"denyRead":[{"path":"/x","literal":true}],"allowWrite":[],"denyWrite":[]}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, _, err := Parse(data)
		if err != nil {
			return
		}
		out, err := json.Marshal(s)
		if err != nil {
			t.Fatalf("accepted settings do not marshal: %v", err)
		}
		if _, _, err := Parse(out); err != nil {
			t.Fatalf("accepted %s, but its round trip %s is refused: %v", data, out, err)
		}
	})
}

// FuzzGlob: any pattern compiles or is refused with an error, and a literal
// path always matches itself when it has no wildcard.
func FuzzGlob(f *testing.F) {
	for _, s := range []string{"/a/**/b", "/x/[a-c]?", "/[", "/[]]", "/a/[z-a]/*"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		g, err := CompileGlob(s)
		if err != nil {
			return
		}
		if !g.IsWild() && !g.Match(s) {
			t.Fatalf("%q has no wildcard but does not match itself", s)
		}
	})
}
