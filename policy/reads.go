package policy

import (
	"sort"
	"strings"

	"github.com/srt-go/srt/config"
)

// What a denyRead pattern hides, and the grants that re-open it (spec
// c.1: the most specific rule wins; at equal specificity, the allow).
// The launch's mounts apply a pattern to what matches it then, as one
// literal rule per match; the path guard, and a profile that Seatbelt
// applies to every path, apply the pattern itself. All three answer from
// the rules below, so `~/.ssh/known_hosts` in allowRead is readable under
// a `~/.ssh/*` denyRead on every backend, while a match beneath the grant
// stays hidden.

// PatternGrant is a grant (an allowRead, or an allowWrite, which reads
// as one) that lies at or beneath a match of a denyRead pattern, and so
// re-opens what that match hides from its path down.
type PatternGrant struct {
	Path string
	Why  string
	// Beneath are the denyRead patterns' matches strictly beneath Path,
	// as patterns of the path relative to Path (each with a leading '/'):
	// those stay hidden. All: what lies beneath cannot be told apart (a
	// pattern component that spans directories), so all of it does.
	Beneath []*config.Glob
	All     bool
}

// Matches reports whether path (absolute, clean, at or beneath g.Path)
// is one that g leaves hidden.
func (g PatternGrant) Matches(path string) bool {
	if path == g.Path {
		return false
	}
	if g.All {
		return true
	}
	rel := strings.TrimPrefix(path, strings.TrimSuffix(g.Path, "/"))
	for _, r := range g.Beneath {
		if r.MatchOrBeneath(rel) {
			return true
		}
	}
	return false
}

// readPatterns are the denyRead patterns, each once.
func (p *Policy) readPatterns() []LaterRule {
	var out []LaterRule
	for _, r := range p.Later {
		if r.Read && r.Glob != nil {
			out = append(out, r)
		}
	}
	return out
}

// PatternGrants returns the grants that re-open a denyRead pattern's
// matches, shallowest first (a profile lists them in that order, so the
// deepest one that holds a path decides it).
func (p *Policy) PatternGrants() []PatternGrant {
	pats := p.readPatterns()
	if len(pats) == 0 {
		return nil
	}
	var out []PatternGrant
	seen := map[string]bool{}
	for _, a := range p.Reads {
		if !a.Allow || seen[a.Path] {
			continue
		}
		covered := false
		for _, r := range pats {
			covered = covered || r.covers(a.Path)
		}
		if !covered {
			continue
		}
		seen[a.Path] = true
		g := PatternGrant{Path: a.Path, Why: a.Why}
		for _, r := range pats {
			rests, all := r.Glob.Beneath(r.asPattern(a.Path))
			g.Beneath = append(g.Beneath, rests...)
			g.All = g.All || all
		}
		out = append(out, g)
	}
	sort.SliceStable(out, func(i, j int) bool { return Depth(out[i].Path) < Depth(out[j].Path) })
	return out
}

// readPatternHides returns the denyRead pattern that hides path
// (absolute, symlink-free), if one does: one matches it or a directory
// above it, and no grant at or beneath that match re-opens it.
func (p *Policy) readPatternHides(path string) (LaterRule, bool) {
	var hit *LaterRule
	pats := p.readPatterns()
	for i, r := range pats {
		if r.covers(path) {
			hit = &pats[i]
			break
		}
	}
	if hit == nil {
		return LaterRule{}, false
	}
	grants := p.PatternGrants()
	for i := len(grants) - 1; i >= 0; i-- {
		if g := grants[i]; Under(path, g.Path) {
			if g.Matches(path) {
				return *hit, true
			}
			return LaterRule{}, false
		}
	}
	return *hit, true
}

// Depth is the number of p's components ("/" has none).
func Depth(p string) int {
	if p == "/" {
		return 0
	}
	return strings.Count(p, "/")
}

// Readable is what every backend answers for a read of path (absolute,
// symlink-free) while the command runs: what the rules say at launch
// (View), less what a deny entry hides of what appears later
// (ReadDeniedLater). The Linux mounts and path guard apply its two
// halves; the darwin profile is held to it whole (seatbelt's tests).
func (p *Policy) Readable(path string) bool {
	if !p.View(path).Readable {
		return false
	}
	_, denied := p.ReadDeniedLater(path)
	return !denied
}
