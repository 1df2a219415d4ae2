package config

import "testing"

// POSIX entries, on every system.
func TestExpand(t *testing.T) {
	const home, cwd = "/home/u", "/work/repo"
	for _, tc := range []struct {
		in      PathEntry
		want    string
		glob    bool
		dropped bool
	}{
		{PathEntry{Path: "~"}, "/home/u", false, false},
		{PathEntry{Path: "~/"}, "/home/u", false, false},
		{PathEntry{Path: "~/.ssh"}, "/home/u/.ssh", false, false},
		{PathEntry{Path: "~user/x"}, "/work/repo/~user/x", false, false},
		{PathEntry{Path: "."}, "/work/repo", false, false},
		{PathEntry{Path: "./x/"}, "/work/repo/x", false, false},
		{PathEntry{Path: "../x"}, "/work/x", false, false},
		{PathEntry{Path: "x"}, "/work/repo/x", false, false},
		{PathEntry{Path: "/a//b/./c/"}, "/a/b/c", false, false},
		{PathEntry{Path: "/a/b/."}, "/a/b", false, false},
		{PathEntry{Path: "/a/../b"}, "/a/../b", false, false},
		{PathEntry{Path: "/"}, "/", false, false},
		{PathEntry{Path: "src/**"}, "/work/repo/src", false, false},
		{PathEntry{Path: "/**"}, "/", false, false},
		{PathEntry{Path: "**"}, "/", false, false},
		{PathEntry{Path: "**/.env"}, "/work/repo/**/.env", true, false},
		{PathEntry{Path: "~/*.pem"}, "/home/u/*.pem", true, false},
		{PathEntry{Path: "/home/[user-id]/x"}, "/home/[user-id]/x", false, false},
		{PathEntry{Path: "/a/**", Literal: true}, "/a/**", false, false},
		{PathEntry{Path: "~/[x]", Literal: true}, "/home/u/[x]", false, false},
	} {
		p, ok, err := expand(tc.in, home, cwd, false)
		if err != nil || ok == tc.dropped || p.Path != tc.want || (p.Glob != nil) != tc.glob {
			t.Errorf("Expand(%+v) = %+v, %v, %v; want %q glob=%v", tc.in, p, ok, err, tc.want, tc.glob)
		}
	}
	// An empty HOME never turns "~" into "/".
	for _, e := range []string{"~", "~/", "~/x"} {
		if p, ok, _ := expand(PathEntry{Path: e}, "", cwd, false); ok {
			t.Errorf("Expand(%q) with empty HOME = %q, want dropped", e, p.Path)
		}
	}
}

func TestGlob(t *testing.T) {
	for _, tc := range []struct {
		pattern     string
		match, miss []string
		beneath     []string
		root        string
	}{
		{"/w/*.log", []string{"/w/a.log", "/w/.log"}, []string{"/w/a/b.log", "/w/a.logx"}, []string{"/w/a.log/x"}, "/w"},
		{"/w/**/.env", []string{"/w/.env", "/w/a/.env", "/w/a/b/c/.env"}, []string{"/w/a.env", "/x/.env"}, []string{"/w/a/.env/k"}, "/w"},
		{"/w/**", []string{"/w/", "/w/a/b"}, []string{"/x"}, nil, "/w"},
		{"/w/a**b", []string{"/w/ab", "/w/a/x/b"}, []string{"/w/b"}, nil, "/w"},
		{"/w/?.txt", []string{"/w/a.txt"}, []string{"/w/ab.txt", "/w//.txt"}, nil, "/w"},
		{"/w/[ab].txt", []string{"/w/a.txt", "/w/b.txt"}, []string{"/w/c.txt", "/w/[ab].txt"}, nil, "/w"},
		{"/w/[a-c]x", []string{"/w/bx"}, []string{"/w/dx"}, nil, "/w"},
		{"/w/[*]", []string{"/w/*"}, []string{"/w/a"}, nil, "/w"},
		{"/w/[^a]", []string{"/w/^", "/w/a"}, []string{"/w/b"}, nil, "/w"},
		{"/w/[!a]", []string{"/w/!", "/w/a"}, []string{"/w/b"}, nil, "/w"},
		{"/w/[user-id]/*", []string{"/w/[user-id]/x"}, []string{"/w/u/x"}, nil, "/w/[user-id]"},
		{"/w/[]/*", []string{"/w/[]/x"}, nil, nil, "/w/[]"},
		{"/w/[ab/*", []string{"/w/[ab/x"}, nil, nil, "/w/[ab"},
		{"/opt*/keys", []string{"/opt1/keys", "/opt/keys"}, []string{"/op/keys"}, nil, "/"},
		{"/a.b/(x)+/*", []string{"/a.b/(x)+/y"}, []string{"/aXb/(x)+/y", "/a.b/xx/y"}, nil, "/a.b/(x)+"},
	} {
		g, err := CompileGlob(tc.pattern)
		if err != nil {
			t.Fatalf("CompileGlob(%q): %v", tc.pattern, err)
		}
		for _, p := range tc.match {
			if !g.Match(p) || !g.MatchOrBeneath(p) {
				t.Errorf("%q does not match %q", tc.pattern, p)
			}
		}
		for _, p := range tc.miss {
			if g.Match(p) {
				t.Errorf("%q matches %q", tc.pattern, p)
			}
		}
		for _, p := range tc.beneath {
			if g.Match(p) || !g.MatchOrBeneath(p) {
				t.Errorf("%q: %q should be beneath a match, not a match", tc.pattern, p)
			}
		}
		if g.Root() != tc.root {
			t.Errorf("%q: Root() = %q, want %q", tc.pattern, g.Root(), tc.root)
		}
	}
	if _, err := CompileGlob("/a/\x00*"); err == nil {
		t.Error("NUL accepted")
	}
}

func TestGlobMayHoldMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		yes, no []string
	}{
		{"/w/secrets/*.pem", []string{"/", "/w", "/w/secrets"}, []string{"/w/secrets/k.pem", "/w/other", "/x", "/w/secrets/a/b"}},
		{"/w/**/.env", []string{"/w", "/w/a", "/w/a/b/c", "/w/.env"}, []string{"/x", "/v/a"}},
		{"/w/**/secrets/*.pem", []string{"/w/a/secrets", "/w/secrets", "/w/a/b"}, []string{"/x/secrets"}},
		{"/w/s?/k", []string{"/w/s1"}, []string{"/w/s12", "/w/s1/k"}},
		{"/w/[ab]x/k", []string{"/w/ax", "/w/bx"}, []string{"/w/cx"}},
		{"/w/a**b/c", []string{"/w/a", "/w/q/r/s"}, []string{"/v"}}, // a component with ** spans several: yes below /w
		{"/w/x[a/]y/z", []string{"/w/q"}, []string{"/v"}},           // a set holding '/': loose from there
		{"/w/f", []string{"/", "/w"}, []string{"/w/f", "/w/g"}},
	} {
		g, err := CompileGlob(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range tc.yes {
			if !g.MayHoldMatch(d) {
				t.Errorf("%s: MayHoldMatch(%q) = false", tc.pattern, d)
			}
		}
		for _, d := range tc.no {
			if g.MayHoldMatch(d) {
				t.Errorf("%s: MayHoldMatch(%q) = true", tc.pattern, d)
			}
		}
	}
}

func TestGlobKeepsMatches(t *testing.T) {
	for _, tc := range []struct {
		pattern, from, to string
		keeps             bool
	}{
		{"/w/secrets/*.pem", "/w/secrets", "/w/pub", false},
		{"/w/secrets/*.pem", "/w/secrets", "/w/secrets", true},
		{"/w/secrets/*.pem", "/w/pub", "/tmp", true}, // nothing beneath /w/pub matches
		{"/w/**/.env", "/w/a/b", "/w/c", true},       // a match beneath either is a match
		{"/w/**/.env", "/w/a/b", "/tmp/x", false},
		{"/w/**/s/*.pem", "/w/a/s", "/w/b/s", true},
		{"/w/**/s/*.pem", "/w/a/s", "/w/b", false},
		{"/w/**/s/*.pem", "/w/a", "/w/b", true},
		{"/w/a**b/c", "/w/a", "/w/a", false}, // loose: errs towards no
	} {
		g, err := CompileGlob(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if got := g.KeepsMatches(tc.from, tc.to); got != tc.keeps {
			t.Errorf("%s: KeepsMatches(%q, %q) = %v", tc.pattern, tc.from, tc.to, got)
		}
	}
}
