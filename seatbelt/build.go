package seatbelt

import (
	"sort"
	"strings"

	"github.com/srt-go/srt/pathguard"
	"github.com/srt-go/srt/policy"
)

// Options are what the profile says besides the filesystem policy.
type Options struct {
	// Tag is the message of every denial (the log tag that attributes
	// it to a command).
	Tag string
	// GitConfig is filesystem.allowGitConfig: a repository's config is
	// writable where its tree is.
	GitConfig bool
}

// Filesystem returns the profile's filesystem rules for pol, meaning what
// the Linux backend enforces (package policy): reads — everything, but
// what denyRead hides, the most specific rule winning and an allow
// winning at equal specificity; writes — only beneath allowWrite, never
// beneath a denyWrite or a protected name (at any depth, in any case:
// matched by name, as the Linux path guard judges them), and what a deny
// entry names later too (patterns as regular expressions).
func Filesystem(pol *policy.Policy, o Options) ([]Rule, error) {
	if pol.Disabled {
		return []Rule{{Action: Allow, Ops: []string{"file-read*", "file-write*"}, Why: "filesystem.disabled"}}, nil
	}
	var rules []Rule
	// Reads: Seatbelt applies the last rule that matches, so the rules go
	// from the least specific to the most, a deny before an allow on the
	// same path.
	rules = append(rules, Rule{Action: Allow, Ops: []string{"file-read*"}, Why: "everything is readable but what denyRead hides"})
	reads := append([]policy.Rule(nil), pol.Reads...)
	for _, l := range pol.Later {
		if l.Read && l.Glob == nil && !l.Existed {
			reads = append(reads, policy.Rule{Path: l.Path, Why: l.Why})
		}
	}
	sort.SliceStable(reads, func(i, j int) bool {
		di, dj := policy.Depth(reads[i].Path), policy.Depth(reads[j].Path)
		if di != dj {
			return di < dj
		}
		return !reads[i].Allow && reads[j].Allow
	})
	for _, r := range reads {
		rules = append(rules, Rule{Action: action(r.Allow), Ops: []string{"file-read*"}, Filters: pathFilters(r.Path, !r.Allow), Why: r.Why})
	}
	// A denyRead pattern is never re-opened by a grant.
	for _, l := range pol.Later {
		if l.Read && l.Glob != nil {
			re, err := CaselessGlobRegex(l.Pattern, true)
			if err != nil {
				return nil, err
			}
			rules = append(rules, Rule{Action: Deny, Ops: []string{"file-read*"}, Filters: []Filter{{Kind: "regex", Value: re}}, Why: l.Why})
		}
	}
	// ...but by a grant at or beneath its match (policy.PatternGrants),
	// shallowest first: the grant, then what the rules above say beneath
	// it, then what the patterns match beneath it.
	for _, g := range pol.PatternGrants() {
		rules = append(rules, Rule{Action: Allow, Ops: []string{"file-read*"}, Filters: []Filter{{Kind: "subpath", Value: g.Path}}, Why: g.Why + " (re-opens a denyRead pattern's match)"})
		for _, r := range reads {
			if r.Path != g.Path && policy.Under(r.Path, g.Path) {
				rules = append(rules, Rule{Action: action(r.Allow), Ops: []string{"file-read*"}, Filters: pathFilters(r.Path, !r.Allow), Why: r.Why})
			}
		}
		base := "^" + literalRegex(strings.TrimSuffix(g.Path, "/"))
		if g.All {
			rules = append(rules, Rule{Action: Deny, Ops: []string{"file-read*"}, Filters: []Filter{{Kind: "regex", Value: base + "/"}}, Why: "a denyRead pattern beneath " + g.Path})
			continue
		}
		for _, rest := range g.Beneath {
			re, err := CaselessGlobRegex(rest.String(), true)
			if err != nil {
				return nil, err
			}
			rules = append(rules, Rule{Action: Deny, Ops: []string{"file-read*"}, Filters: []Filter{{Kind: "regex", Value: base + strings.TrimPrefix(re, "^")}}, Why: "a denyRead pattern's match beneath " + g.Path})
		}
	}
	// Writes: every grant; then, in the reads' order, what reads hide
	// (a hidden area is read-only) and what they re-open where it is
	// writable; then every deny, which wins at any height — also every
	// deny entry for what appears later, read or write (a file made
	// later at a hidden path must not be written either).
	var denies []Rule
	for _, r := range pol.Writes {
		rule := Rule{Action: action(r.Allow), Ops: []string{"file-write*"}, Filters: pathFilters(r.Path, !r.Allow), Why: r.Why}
		if r.Allow {
			rules = append(rules, rule)
		} else {
			denies = append(denies, rule)
		}
	}
	for _, r := range reads {
		switch {
		case !r.Allow:
			rules = append(rules, Rule{Action: Deny, Ops: []string{"file-write*"}, Filters: pathFilters(r.Path, true), Why: r.Why + " (hidden, so read-only)"})
		case pol.View(r.Path).Writable:
			rules = append(rules, Rule{Action: Allow, Ops: []string{"file-write*"}, Filters: []Filter{{Kind: "subpath", Value: r.Path}}, Why: r.Why})
		}
	}
	for _, l := range pol.Later {
		if l.Existed {
			continue // its rule is among the policy's own, above
		}
		fs := pathFilters(l.Path, true)
		if l.Glob != nil {
			re, err := CaselessGlobRegex(l.Pattern, true)
			if err != nil {
				return nil, err
			}
			fs = []Filter{{Kind: "regex", Value: re}}
		}
		denies = append(denies, Rule{Action: Deny, Ops: []string{"file-write*"}, Filters: fs, Why: l.Why})
	}
	rules = append(rules, denies...)
	rules = append(rules, protectedNames(o.GitConfig)...)
	for _, h := range pol.HooksPaths {
		// The host's own relative core.hooksPath: that directory, in
		// any repository, is where git runs hooks from.
		rules = append(rules, Rule{Action: Deny, Ops: []string{"file-write*"}, Filters: []Filter{{Kind: "regex", Value: "/" + caseless(h) + "/.+$"}},
			Why: "a repository's hooks (core.hooksPath " + h + ")"})
	}
	return rules, nil
}

// pathFilters match path and what lies beneath it; a deny's match every
// spelling of it too, as a volume that ignores case (APFS's default)
// reaches it by any. A grant keeps its spelling: another reaches nothing
// more (failing closed).
func pathFilters(path string, deny bool) []Filter {
	fs := []Filter{{Kind: "subpath", Value: path}}
	if deny {
		re := "^" + caseless(path) + "(/.*)?$"
		if path == "/" {
			re = "^/"
		}
		fs = append(fs, Filter{Kind: "regex", Value: re})
	}
	return fs
}

func action(allow bool) Action {
	if allow {
		return Allow
	}
	return Deny
}

// protectedNames are the rules for spec c.5's names, wherever they are.
func protectedNames(gitConfig bool) []Rule {
	files, dirs, claude := pathguard.ProtectedNames()
	var rules []Rule
	deny := func(re, why string) {
		rules = append(rules, Rule{Action: Deny, Ops: []string{"file-write*"}, Filters: []Filter{{Kind: "regex", Value: re}}, Why: why})
	}
	for _, f := range files {
		deny("/"+caseless(f)+"(/.*)?$", "protected name "+f)
	}
	for _, d := range dirs {
		deny("/"+caseless(d)+"(/.*)?$", "protected directory "+d)
	}
	for _, c := range claude {
		deny("/"+caseless(".claude")+"/"+caseless(c)+"(/.*)?$", "protected name .claude/"+c)
	}
	deny("/"+caseless(pathguard.MergeProgramPrefix)+"[^/]*$", "a merge strategy's program, which a rebase left stopped could run")
	for _, p := range pathguard.ProtectedPaths() {
		deny("/"+caselessPath(p)+"(/.*)?$", "protected path "+p)
	}
	git := "/" + caseless(".git") + "/"
	hooks := caseless("hooks")
	// A repository's hooks, and those of its submodules. (The Linux guard
	// lets git's templates, new *.sample files, be made there; a profile
	// cannot tell a new file from an old one, so none is.)
	for _, at := range []string{git + hooks + "/", git + caseless("modules") + "/.+/" + hooks + "/"} {
		deny(at+".+$", "a repository's hooks")
	}
	if !gitConfig {
		config := caseless("config") + "(" + caseless(".worktree") + ")?$"
		deny(git+config, "a repository's config")
		deny(git+caseless("modules")+"/.+/"+config, "a submodule's config")
		deny(git+caseless("worktrees")+"/[^/]+/"+config, "a worktree's config")
	}
	return rules
}

// caselessPath is caseless for a protected path, whose "*" stands for
// any run of characters within one name (pathguard.MatchComponent).
func caselessPath(p string) string {
	parts := strings.Split(p, "*")
	for i, part := range parts {
		parts[i] = caseless(part)
	}
	return strings.Join(parts, "[^/]*")
}

// caseless is name as a regular expression of any case (ASCII letters:
// a bracket of multibyte characters would not read the same to every
// regex engine).
func caseless(name string) string {
	var b strings.Builder
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c >= 'a' && c <= 'z':
			b.WriteString("[" + string(c) + string(c-'a'+'A') + "]")
		case c >= 'A' && c <= 'Z':
			b.WriteString("[" + string(c-'A'+'a') + string(c) + "]")
		default:
			b.WriteString(literalRegex(string(c)))
		}
	}
	return b.String()
}
