package config

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// FuzzGlobMayHoldMatch: every directory above a path the pattern matches
// may hold a match (the guard refuses a symlink there, which would send
// the match elsewhere).
func FuzzGlobMayHoldMatch(f *testing.F) {
	for _, s := range [][2]string{{"/w/secrets/*.pem", "/w/secrets/k.pem"}, {"/w/**/.env", "/w/a/b/.env"},
		{"/w/a**b/c", "/w/a/x/b/c"}, {"/w/[/]x/*", "/w/[/]x/y"}, {"/w/x[a/]y/z", "/w/xay/z"}, {"/**", "/a"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, path string) {
		g, err := CompileGlob(pattern)
		// The guard matches clean, absolute paths.
		if err != nil || !strings.HasPrefix(path, "/") || filepath.Clean(path) != path || !g.Match(path) {
			return
		}
		for dir := filepath.Dir(path); ; dir = filepath.Dir(dir) {
			if filepath.Clean(dir) == dir && !g.MayHoldMatch(dir) {
				t.Fatalf("%q matches %q, but MayHoldMatch(%q) is false", pattern, path, dir)
			}
			// A link at dir to elsewhere keeps matches only if the same
			// path beneath elsewhere matches too.
			for _, to := range []string{"/elsewhere", "/elsewhere/x/y"} {
				if filepath.Clean(dir) == dir && g.KeepsMatches(dir, to) && !g.Match(to+strings.TrimPrefix(path, strings.TrimSuffix(dir, "/"))) {
					t.Fatalf("%q: KeepsMatches(%q, %q), but %q matches and its image does not", pattern, dir, to, path)
				}
			}
			// What the pattern matches beneath dir, Beneath names.
			if filepath.Clean(dir) == dir && dir != path {
				rel := strings.TrimPrefix(path, strings.TrimSuffix(dir, "/"))
				rests, all := g.Beneath(dir)
				if !all && !slices.ContainsFunc(rests, func(r *Glob) bool { return r.Match(rel) }) {
					t.Fatalf("%q matches %q, but none of Beneath(%q) matches %q", pattern, path, dir, rel)
				}
				for _, r := range rests {
					for _, other := range []string{"/x", "/x/y", rel + "/z"} {
						if r.Match(other) && !g.Match(strings.TrimSuffix(dir, "/")+other) {
							t.Fatalf("%q: Beneath(%q) holds %q, which matches %q, but the pattern does not match beneath", pattern, dir, r, other)
						}
					}
				}
			}
			if dir == "/" || dir == "." {
				return
			}
		}
	})
}
