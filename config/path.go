package config

import (
	"fmt"
	"strings"
)

// Path is an expanded filesystem entry: an absolute path, or an absolute
// pattern when Glob is set.
type Path struct {
	Path string
	Glob *Glob // nil for a literal path
}

// Expand turns an entry into an absolute path in the slash form (spec
// c.2; see FromOS): "~" and "~/x" are under home ("~user" is not
// expanded and so is relative), a relative entry is under cwd, runs of
// '/' and "/./" collapse, trailing '/' and "/." go, and a trailing "/**"
// means the directory itself. ok is false when the entry names nothing:
// "~" with an empty home is dropped, never taken as "/". Symlinks are
// resolved later, by the plan, against the disk. home and cwd are as this
// system spells them.
//
// On Windows the entry is read as Windows spells paths first (spec c.2):
// %USERPROFILE%, %HOMEDRIVE% and %HOMEPATH% (in any case) are home, its
// volume and the rest of it; '\' separates as '/' does ("~\x" is under
// home); the \\?\ prefix goes and the drive letter is upper-cased;
// "/" or "\x", which have no drive, are on cwd's; and ".." is folded, as
// Win32 folds it. Patterns keep the syntax of spec c.3, with '\' a
// separator and never an escape.
//
// A literal entry ({"path": ..., "literal": true}) is never a pattern, so
// its "*", "?", "[" and "/**" are part of the name.
func Expand(e PathEntry, home, cwd string) (p Path, ok bool, err error) {
	return expand(e, home, cwd, windowsPaths)
}

func expand(e PathEntry, home, cwd string, windows bool) (p Path, ok bool, err error) {
	s := e.Path
	if windows {
		if s, ok, err = windowsEntry(s, home); err != nil || !ok {
			return Path{}, ok, err
		}
		if home != "" {
			if home, err = fromOS(home, true); err != nil {
				return Path{}, false, fmt.Errorf("home %w", err)
			}
		}
		if cwd, err = fromOS(cwd, true); err != nil {
			return Path{}, false, fmt.Errorf("working directory %w", err)
		}
	}
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
	case windows && volumeRoot(s, true) == "" && strings.HasPrefix(s, "/"):
		// No drive ("/", "\x", a bare "**"): the working directory's.
		s = volumeRoot(cwd, true) + s
	case !strings.HasPrefix(s, "/"):
		s = joinIn(cwd, s, windows)
	}
	if windows {
		vol := volumeRoot(s, true)
		s = cleanIn(vol, s[len(vol):])
	} else {
		s = clean(s)
	}
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

// windowsEntry is a Windows entry with its variables expanded, its
// separators made '/' and, when it names a volume (C:\x, \\srv\share,
// \\?\C:\x), in the slash form; other entries stay relative, rooted or
// under "~" for Expand to place. ok is false when it names home and
// there is none.
func windowsEntry(s, home string) (string, bool, error) {
	s, ok := windowsVariables(s, home)
	if !ok {
		return "", false, nil
	}
	s = strings.ReplaceAll(s, `\`, "/")
	if isDrive(s) || strings.HasPrefix(s, "//") || strings.HasPrefix(s, "/??/") {
		vol, rest, err := windowsVolume(s)
		if err != nil {
			return "", false, err
		}
		// Not cleaned yet: a trailing "/**" is the directory itself.
		return vol + rest, true, nil
	}
	return s, true, nil
}

// windowsVariables expands %USERPROFILE%, %HOMEDRIVE% and %HOMEPATH% in
// s, in any case, from home (as Windows spells it): the reference takes
// them from the environment, where they name the user's profile, which is
// home. ok is false when s names one and home is "".
func windowsVariables(s, home string) (string, bool) {
	if !strings.Contains(s, "%") {
		return s, true
	}
	drive, rest := home, ""
	if _, r, err := windowsVolume(strings.ReplaceAll(home, `\`, "/")); err == nil {
		drive, rest = home[:len(home)-len(r)], home[len(home)-len(r):]
	}
	vars := [][2]string{{"%USERPROFILE%", home}, {"%HOMEDRIVE%", drive}, {"%HOMEPATH%", rest}}
	var b strings.Builder
	for i := 0; i < len(s); {
		matched := false
		for _, v := range vars {
			if hasPrefixFold(s[i:], v[0]) {
				if home == "" {
					return "", false
				}
				b.WriteString(v[1])
				i += len(v[0])
				matched = true
				break
			}
		}
		if !matched {
			b.WriteByte(s[i])
			i++
		}
	}
	return b.String(), true
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
