package seatbelt

import (
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/srt-go/srt/config"
)

// Any path, quoted, reads back as itself and as one string: the rule
// around it keeps its meaning.
func FuzzQuote(f *testing.F) {
	f.Add(`/a") (allow default) ("`)
	f.Add("/a\nb\x00\x7f\\")
	f.Fuzz(func(t *testing.T, s string) {
		text := "(allow file-read* (literal " + Quote(s) + "))"
		forms, err := read(text)
		if err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		if len(forms) != 1 {
			t.Fatalf("%q read as %d forms", text, len(forms))
		}
		rule := forms[0].([]any)
		if len(rule) != 3 {
			t.Fatalf("%q read as %v", text, rule)
		}
		if got := rule[2].([]any)[1].(string); got != s {
			t.Fatalf("%q read back as %q", s, got)
		}
	})
}

// A glob's regular expression matches what the glob matches (package
// config's, which the Linux backend uses), beneath it too.
func FuzzGlobRegex(f *testing.F) {
	f.Add("/a/**/*.pem", "/a/b/c.pem")
	f.Add("/a/[b-d]?/x", "/a/c1/x")
	f.Add("/a/[]x/*", "/a/[]x/y")
	f.Add("/a.b/(c)|d+/**", "/a.b/(c)|d+/e/f")
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if !strings.HasPrefix(pattern, "/") || !strings.HasPrefix(path, "/") {
			return
		}
		g, err := config.CompileGlob(pattern)
		if err != nil {
			return
		}
		for _, beneath := range []bool{false, true} {
			re, err := GlobRegex(pattern, beneath)
			if err != nil {
				return // a set Seatbelt cannot spell: refused, not changed
			}
			m, err := regexp.Compile(re)
			if err != nil {
				t.Fatalf("%q gave the regex %q, which does not compile: %v", pattern, re, err)
			}
			want := g.Match(path)
			if beneath {
				want = g.MatchOrBeneath(path)
			}
			if got := m.MatchString(path); got != want {
				t.Fatalf("%q (beneath %v) on %q: regex %q says %v, the glob %v", pattern, beneath, path, re, got, want)
			}
		}
	})
}

// The caseless regex of a glob matches what the glob matches in any ASCII
// case, and nothing more than a case-folded glob would.
func FuzzCaselessGlobRegex(f *testing.F) {
	f.Add("/w/**/*.PEM", "/W/a/key.pem")
	f.Fuzz(func(t *testing.T, pattern, path string) {
		if !strings.HasPrefix(pattern, "/") || !strings.HasPrefix(path, "/") {
			return
		}
		lower := func(s string) string {
			return strings.Map(func(r rune) rune {
				if r >= 'A' && r <= 'Z' {
					return r + 'a' - 'A'
				}
				return r
			}, s)
		}
		g, err := config.CompileGlob(lower(pattern))
		if err != nil {
			return
		}
		re, err := CaselessGlobRegex(pattern, false)
		if err != nil {
			return
		}
		m, err := regexp.Compile(re)
		if err != nil {
			t.Fatalf("%q: %v", re, err)
		}
		// Sets ([...]) keep their case; only text outside them folds.
		if strings.Contains(pattern, "[") {
			return
		}
		if got, want := m.MatchString(path), g.Match(lower(path)); got != want {
			t.Fatalf("%q on %q: regex %q says %v, the folded glob %v", pattern, path, re, got, want)
		}
	})
}

// The keeper's reports come from a process the command may have taken
// over: any line is read without panic, only the four reports are taken,
// and a started pid is a real one (never 0, 1 or negative: kill(-1)).
func FuzzParseReport(f *testing.F) {
	for _, s := range []string{"started 1234", "stopped", "asked", "ended", "started -1", "started 1", "started 0x10", "started 12 34", "stopped now", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, line string) {
		kind, pid, ok := ParseReport(line)
		switch {
		case !ok && (kind != "" || pid != 0):
			t.Fatalf("%q: refused but %q %d", line, kind, pid)
		case ok && kind == ReportStarted && (pid <= 1 || line != ReportStarted+" "+strconv.Itoa(pid)):
			t.Fatalf("%q: pid %d", line, pid)
		case ok && kind != ReportStarted && (pid != 0 || line != kind):
			t.Fatalf("%q: %q %d", line, kind, pid)
		}
	})
}

// The trampoline's options read back as they were written, and whatever
// else its first argument holds is refused or reads back the same.
func FuzzParseLaunch(f *testing.F) {
	for _, s := range []string{"v1", "v1,tty", "v1,parent,null=3,null=9", "v1,null=2", "v2", "v1,,tty", "v1,null=1025"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		l, err := ParseLaunch(s)
		if err != nil {
			return
		}
		again, err := ParseLaunch(l.String())
		if err != nil || again.String() != l.String() {
			t.Fatalf("%q: %q reads back as %q (%v)", s, l.String(), again.String(), err)
		}
		for _, fd := range l.NullFDs {
			if fd < 3 || fd > 1024 {
				t.Fatalf("%q: null descriptor %d", s, fd)
			}
		}
	})
}
