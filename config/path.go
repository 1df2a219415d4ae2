package config

import (
	"path/filepath"
	"strings"
)

// Path is an expanded filesystem entry: an absolute path, or an absolute
// pattern when Glob is set.
type Path struct {
	Path string
	Glob *Glob // nil for a literal path
}

// Expand turns an entry into an absolute path (spec c.2): "~" and "~/x"
// are under home ("~user" is not expanded and so is relative), a relative
// entry is under cwd, runs of '/' and "/./" collapse, trailing '/' and "/."
// go, and a trailing "/**" means the directory itself. ok is false when the
// entry names nothing: "~" with an empty home is dropped, never taken as
// "/". Symlinks are resolved later, by the plan, against the disk.
//
// A literal entry ({"path": ..., "literal": true}) is never a pattern, so
// its "*", "?", "[" and "/**" are part of the name.
func Expand(e PathEntry, home, cwd string) (p Path, ok bool, err error) {
	s := e.Path
	if !e.Literal {
		for strings.HasSuffix(s, "/**") {
			s = strings.TrimSuffix(s, "/**")
		}
		if s == "" || s == "**" {
			s = "/"
		}
	}
	switch {
	case s == "~" || strings.HasPrefix(s, "~/"):
		if home == "" {
			return Path{}, false, nil
		}
		s = home + s[1:]
	case !strings.HasPrefix(s, "/"):
		s = filepath.Join(cwd, s)
	}
	s = clean(s)
	if !e.Literal && hasGlobChars(s) {
		g, err := CompileGlob(s)
		if err != nil {
			return Path{}, false, err
		}
		if g.IsWild() {
			return Path{Path: s, Glob: g}, true, nil
		}
	}
	return Path{Path: s}, true, nil
}

// clean collapses "//" and "/./" and drops a trailing "/" or "/.", but
// keeps "..": folding it lexically could name a different file than the
// kernel would reach through a symlink.
func clean(s string) string {
	parts := strings.Split(s, "/")
	out := parts[:0]
	for i, p := range parts {
		if (p == "" && i > 0) || p == "." {
			continue
		}
		out = append(out, p)
	}
	s = strings.Join(out, "/")
	if s == "" {
		return "/"
	}
	return s
}
