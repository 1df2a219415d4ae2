package config

import (
	"fmt"
	"regexp"
	"strings"
	"sync"
	"unicode/utf8"
)

// Glob is a compiled path pattern (spec c.3): "*" is any run of non-'/'
// characters, "**" any run including '/' ("**/" is zero or more
// directories), "?" one non-'/' character, and "[...]" a set of members and
// ranges. "^" and "!" inside a set are plain members (there is no
// negation), and a bracket that spells no valid set (an empty "[]", a
// backwards range, no closing "]") is literal text.
//
// Patterns compile to RE2 expressions, whose matching time is linear in the
// path: a hostile pattern cannot make the plan slow.
type Glob struct {
	pattern string
	exact   *regexp.Regexp // the path itself
	below   *regexp.Regexp // the path or anything beneath it
	prefix  string         // the directory before the first wildcard
	wild    bool

	compsOnce sync.Once
	comps     []globComp // the pattern's components, for MayHoldMatch
}

// globComp is one component of a pattern: "**", or one whose matches
// are one component each, or (loose) one whose matches may span several.
type globComp struct {
	any, loose bool
	re         *regexp.Regexp
	text       string
}

func hasGlobChars(s string) bool { return strings.ContainsAny(s, "*?[") }

// CompileGlob compiles an absolute pattern.
func CompileGlob(pattern string) (*Glob, error) {
	if strings.IndexByte(pattern, 0) >= 0 {
		return nil, fmt.Errorf("glob %q contains a NUL byte", pattern)
	}
	if !utf8.ValidString(pattern) {
		return nil, fmt.Errorf("glob %q is not valid UTF-8", pattern)
	}
	var re strings.Builder
	g := &Glob{pattern: pattern, prefix: pattern}
	firstWild := -1
	for i := 0; i < len(pattern); {
		c := pattern[i]
		if firstWild < 0 && (c == '*' || c == '?') {
			firstWild = i
		}
		switch {
		case c == '*' && i+1 < len(pattern) && pattern[i+1] == '*':
			if i+2 < len(pattern) && pattern[i+2] == '/' {
				re.WriteString(`(?:.*/)?`)
				i += 3
			} else {
				re.WriteString(`.*`)
				i += 2
			}
		case c == '*':
			re.WriteString(`[^/]*`)
			i++
		case c == '?':
			re.WriteString(`[^/]`)
			i++
		case c == '[':
			class, n, ok := bracket(pattern[i:])
			if !ok {
				re.WriteString(regexp.QuoteMeta("["))
				i++
				continue
			}
			re.WriteString(class)
			if firstWild < 0 {
				firstWild = i
			}
			i += n
		default:
			_, n := utf8.DecodeRuneInString(pattern[i:])
			re.WriteString(regexp.QuoteMeta(pattern[i : i+n]))
			i += n
		}
	}
	if firstWild >= 0 {
		g.wild = true
		g.prefix = pattern[:firstWild]
		if j := strings.LastIndexByte(g.prefix, '/'); j >= 0 {
			g.prefix = g.prefix[:j]
		}
		if g.prefix == "" {
			g.prefix = "/"
		}
	}
	var err error
	if g.exact, err = regexp.Compile(`^` + re.String() + `$`); err != nil {
		return nil, bug(err)
	}
	if g.below, err = regexp.Compile(`^` + re.String() + `(?:/.*)?$`); err != nil {
		return nil, bug(err)
	}
	return g, nil
}

// bracket parses a "[...]" set at the start of s into an RE2 class. ok is
// false when s does not start with a valid set.
func bracket(s string) (class string, n int, ok bool) {
	end := strings.IndexByte(s[1:], ']')
	if end <= 0 { // unmatched, or "[]"
		return "", 0, false
	}
	body := []rune(s[1 : end+1])
	var b strings.Builder
	b.WriteString("[")
	for i := 0; i < len(body); i++ {
		lo := body[i]
		if i+2 < len(body) && body[i+1] == '-' {
			hi := body[i+2]
			if hi < lo {
				return "", 0, false // a backwards range spells no set
			}
			fmt.Fprintf(&b, `\x{%x}-\x{%x}`, lo, hi)
			i += 2
			continue
		}
		fmt.Fprintf(&b, `\x{%x}`, lo)
	}
	b.WriteString("]")
	return b.String(), end + 2, true
}

// String returns the pattern as written.
func (g *Glob) String() string { return g.pattern }

// IsWild reports whether the pattern has any wildcard; one that has none
// (only invalid brackets) names exactly one path.
func (g *Glob) IsWild() bool { return g.wild }

// Match reports whether path matches the pattern.
func (g *Glob) Match(path string) bool { return g.exact.MatchString(path) }

// MatchOrBeneath reports whether path matches, or lies beneath a match:
// how a deny pattern applies.
func (g *Glob) MatchOrBeneath(path string) bool { return g.below.MatchString(path) }

// Root is the deepest directory that contains every match: where a walk
// for matches starts.
func (g *Glob) Root() string { return g.prefix }

// MayHoldMatch reports whether a match could lie strictly beneath dir
// (absolute, clean): whether dir could be one of a match's directories.
// It errs towards yes: a component whose matches may span several ("a**b",
// a set holding '/') matches any run of them.
func (g *Glob) MayHoldMatch(dir string) bool {
	at, loose := g.states(dir)
	if loose {
		return true
	}
	for i := range len(g.comps) {
		if at[i] {
			return true
		}
	}
	return false
}

// Beneath returns what the pattern matches strictly beneath dir
// (absolute, clean), as patterns of the path relative to dir, each with a
// leading '/': a path beneath dir matches, or lies beneath a match, when
// its rest does for one of them. all says that cannot be told (a
// component whose matches may span several was reached): take every
// path beneath dir as a match.
func (g *Glob) Beneath(dir string) (rests []*Glob, all bool) {
	at, loose := g.states(dir)
	if loose {
		return nil, true
	}
	for i := range len(g.comps) {
		if !at[i] {
			continue
		}
		var b strings.Builder
		for _, c := range g.comps[i:] {
			b.WriteString("/" + c.text)
		}
		rest, err := CompileGlob(b.String())
		if err != nil {
			return nil, true
		}
		rests = append(rests, rest)
	}
	return rests, false
}

// KeepsMatches reports whether every path beneath from that matches has
// a match at the same place beneath to: whether a symlink at from that
// leads to to sends no match elsewhere. It errs towards no.
func (g *Glob) KeepsMatches(from, to string) bool {
	a, loose := g.states(from)
	if loose {
		return false
	}
	b, _ := g.states(to) // loose in to: taken as no match
	for i := range len(g.comps) {
		if a[i] && !b[i] {
			return false
		}
	}
	return true
}

// states matches the pattern's components against dir's: at[i] says the
// first i components can match all of dir (so a path beneath dir matches
// when the rest of the pattern matches the rest of the path); loose says
// a component that may span several was reached, and at is then partial.
func (g *Glob) states(dir string) (at []bool, loose bool) {
	g.compsOnce.Do(g.splitComps)
	var d []string
	if dir = strings.Trim(dir, "/"); dir != "" {
		d = strings.Split(dir, "/")
	}
	p := g.comps
	at = make([]bool, len(p)+1)
	// seen[i*(len(d)+1)+j]: components i on were tried against dir's
	// from j.
	seen := make([]bool, (len(p)+1)*(len(d)+1))
	var walk func(i, j int)
	walk = func(i, j int) {
		if seen[i*(len(d)+1)+j] {
			return
		}
		seen[i*(len(d)+1)+j] = true
		if j == len(d) {
			at[i] = true
			if i < len(p) && p[i].any {
				walk(i+1, j) // "**/" matches no directory too
			}
			return
		}
		if i == len(p) {
			return
		}
		switch c := p[i]; {
		case c.any:
			walk(i+1, j)
			walk(i, j+1)
		case c.loose:
			loose = true
		default:
			if c.re.MatchString(d[j]) {
				walk(i+1, j+1)
			}
		}
	}
	walk(0, 0)
	return at, loose
}

func (g *Glob) splitComps() {
	pat := strings.Trim(g.pattern, "/")
	// A set with a '/' in it spans components: the split below would cut
	// it, so every component after its start is loose.
	loose := len(pat)
	for i := strings.IndexByte(pat, '['); i >= 0 && i < loose; {
		end := strings.IndexByte(pat[i+1:], ']')
		if end < 0 {
			break
		}
		if strings.IndexByte(pat[i+1:i+1+end], '/') >= 0 {
			loose = i
			break
		}
		next := strings.IndexByte(pat[i+1:], '[')
		if next < 0 {
			break
		}
		i += 1 + next
	}
	at := 0
	for _, c := range strings.Split(pat, "/") {
		n := len(g.comps)
		switch {
		case c == "**":
			g.comps = append(g.comps, globComp{any: true})
		case at+len(c) > loose || strings.Contains(c, "**"):
			g.comps = append(g.comps, globComp{loose: true})
		default:
			one, err := CompileGlob("/" + c)
			if err != nil {
				g.comps = append(g.comps, globComp{loose: true})
				break
			}
			g.comps = append(g.comps, globComp{re: regexp.MustCompile(strings.Replace(one.exact.String(), `^/`, `^`, 1))})
		}
		g.comps[n].text = c
		at += len(c) + 1
	}
}
