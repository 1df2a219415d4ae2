// Package policy is the platform-neutral half of the filesystem
// sandbox: it expands the settings' rules, resolves their symlinks and
// globs against the disk, finds the protected names, and answers one
// query — what may the command do at a path, and which rules say so. Every
// backend reads this one result: Linux's mounts and Landlock rules, the
// judging of violations, and later the Seatbelt profile and Windows ACLs,
// so that a rule means the same on every platform. It reads the disk but
// changes nothing and makes no system call of its own.
package policy

import (
	"fmt"
	"io/fs"
	"strings"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/pathguard"
)

// Env is where a policy is made. Its paths are as this system spells
// them (C:\Users\me on Windows); the policy reads them into the slash
// form (config.FromOS), and refuses one it cannot.
type Env struct {
	Home string // "" disables "~" entries and the home walk
	Cwd  string
	// Writable lists paths srt itself makes writable (the per-run temp
	// dir); they take part like allowWrite entries.
	Writable []string
	// Private is srt's own directory of run dirs: neither readable nor
	// writable inside whatever the rules say, but for Writable and
	// PrivateFiles beneath it, so that a command allowed to read or
	// write its parent (allowWrite: ["/tmp"]) can neither read other
	// runs' temp files, nor delete their directories and sockets, nor
	// lock srt out of it. Backends enforce it.
	Private string
	// PrivateFiles are srt's files of this run beneath Private that the
	// command reads (a trust bundle its environment names).
	PrivateFiles []string
	// Dirs reads directories for the protected-name walk; nil means
	// os.ReadDir (Linux passes its own getdents reader). It is given
	// paths as this system spells them.
	Dirs DirReader
	// Inode, if set, reads a file's identity and link count from what
	// os.Lstat returned (the backend's own stat layout): hidden files
	// with other names are then found, for a guard of reads to refuse.
	Inode func(fs.FileInfo) (id FileID, nlink uint64, ok bool)
	// GuardKeepsConfigs says the backend's path guard keeps every git
	// config file by its name (no write, and a rename over it only as a
	// copy of content that runs nothing) and no other name can reach
	// one (no nested mount namespace): a config that exists then gets no
	// deny rule, so git can replace it (git config user.name in a
	// repository made before the run).
	GuardKeepsConfigs bool
}

// FileID names an inode: its device and number.
type FileID struct{ Dev, Ino uint64 }

// Rule is one expanded, resolved settings entry (or protected name): an
// absolute, symlink-free path, whether it allows or denies, and why.
type Rule struct {
	Path  string `json:"path"`
	Allow bool   `json:"allow"`
	Why   string `json:"why"`
}

// Link is a symlink the policy keeps as it is: a protected name that is a
// symlink, or one on the way to a protected target.
type Link struct {
	Path string   `json:"path"` // the link itself (its directory resolved)
	Kind LinkKind `json:"kind"`
	Why  string   `json:"why"`
}

// LinkKind says how a Link is kept.
type LinkKind string

const (
	// PinLink: it can be neither removed nor replaced, so it keeps
	// leading where it did; what it leads to has rules of its own.
	PinLink LinkKind = "pin"
	// MaskLink: it leads nowhere now, and nothing may be created through
	// it (a protected name's target that does not exist yet).
	MaskLink LinkKind = "mask"
)

// Skip is a rule that applies to nothing, and why.
type Skip struct {
	Rule string `json:"rule"`
	Why  string `json:"why"`
}

// Policy is the filesystem policy of one run. Every path it holds, and
// every path its methods take, is in config's slash form: on POSIX the
// path itself, on Windows /C:/Users/me (config.FromOS and config.ToOS
// convert). On Windows an "absolute, symlink-free" path is also spelled
// as the disk spells it (its case, its long names: filepath.EvalSymlinks
// gives it so), since paths are compared as spelled.
type Policy struct {
	// Disabled is filesystem.disabled: everything writable, no
	// protected names (spec c.8).
	Disabled bool `json:"disabled,omitempty"`
	// Reads are the rules on reading (denyRead, allowRead, and every
	// writable path, which is readable too); Writes those on writing
	// (allowWrite, denyWrite, the protected names, srt's own).
	Reads  []Rule `json:"reads"`
	Writes []Rule `json:"writes"`
	Links  []Link `json:"links,omitempty"`
	// Private, PrivateFiles and Writable are Env's.
	Private      string   `json:"private,omitempty"`
	PrivateFiles []string `json:"privateFiles,omitempty"`
	Writable     []string `json:"writable,omitempty"`
	Skipped      []Skip   `json:"skipped,omitempty"`
	// Later are the denyRead and denyWrite entries as the path guard
	// applies them to what is made or written while the command runs:
	// a literal path that did not exist at launch, a pattern that did
	// not match yet.
	Later []LaterRule `json:"later,omitempty"`
	// HiddenInodes are the hidden regular files (under a denyRead entry,
	// not re-opened) that have other names, which may lie anywhere on
	// their filesystem, by inode, with the entry that hides them.
	HiddenInodes map[FileID]string `json:"-"`
	// ReadGuard says why what the command opens for reading must be
	// judged while it runs ("" when the launch's mounts hide all there
	// is): a denyRead pattern, a denyRead path that did not exist yet, or
	// a hidden file with other names.
	ReadGuard string `json:"readGuard,omitempty"`
	// HooksPaths are the relative values of core.hooksPath in the host's
	// own git config (~/.gitconfig, ~/.config/git/config, /etc/gitconfig
	// and what they include): in every repository, the directory of that
	// path beneath its work tree is where git runs hooks from, so the
	// guard keeps such a directory's contents wherever one is made.
	HooksPaths []string `json:"hooksPaths,omitempty"`
	// Repos are the work trees of the repositories the launch's walk
	// found (a .git directory, file or symlink), when the guard keeps
	// their configs by name (Env.GuardKeepsConfigs):
	// it reads their hooks before it judges its first write, since a
	// core.hooksPath may name a directory outside the work tree, where no
	// write would lead it to the repository.
	Repos []string `json:"-"`
	// BareRepos are the git directories not called .git (HEAD, objects
	// and refs: a bare repository, a --separate-git-dir) the walk found:
	// read likewise, each its own "work tree" (git takes a relative
	// core.hooksPath there from the directory it runs in).
	BareRepos []string `json:"-"`
	// Home is Env's: where a repository's core.hooksPath of "~/…"
	// leads, for the guard, which reads repositories while the command
	// runs.
	Home string `json:"-"`
	// TreeHooksPaths are all the relative values of the host's own
	// core.hooksPath (HooksPaths, and "." or ".." ones too), which the
	// guard applies beneath each repository's work tree it reads.
	TreeHooksPaths []string `json:"-"`

	reads, writes map[string][]Rule
}

// LaterRule is one deny entry kept for paths that appear after launch.
type LaterRule struct {
	// Path is a literal entry's path, its existing part's symlinks
	// resolved; Glob a pattern's (matched against real paths, through
	// Root when its directory prefix goes through a symlink).
	Path    string       `json:"path,omitempty"`
	Pattern string       `json:"pattern,omitempty"`
	Glob    *config.Glob `json:"-"`
	Root    string       `json:"-"` // the pattern's directory prefix, resolved
	// Read: a denyRead entry (else denyWrite).
	Read bool   `json:"read,omitempty"`
	Why  string `json:"why"`
	// Existed: a literal path that existed at launch (its mounts hide it).
	Existed bool `json:"existed,omitempty"`
	// file: it existed as a file, not a directory (a mask the host's
	// replacing it would drop).
	file bool
	// links are the symlinks of an entry kept as spelled (its path or
	// directory goes through them); nil for every other.
	links []string
}

// ReadDeniedLater returns the denyRead entry that keeps the command from
// opening path (absolute, symlink-free) for reading while it runs: a
// pattern it matches, or a literal path it lies at or under, unless a
// grant at least as specific re-opens it (a pattern's: PatternGrants). srt's per-run directory is
// never denied.
func (p *Policy) ReadDeniedLater(path string) (LaterRule, bool) {
	return p.deniedLater(path, true)
}

// DeniedLater returns the deny entry that keeps the command from making
// or writing path (absolute, symlink-free) now that it runs. A
// denyWrite entry wins over every grant; a hidden (denyRead) path is
// never writable, unless an allowRead or allowWrite more specific than a
// literal denyRead re-opens it (a pattern beats the grants around it, as
// at launch). srt's own per-run directories are never denied.
func (p *Policy) DeniedLater(path string) (LaterRule, bool) {
	return p.deniedLater(path, false)
}

func (p *Policy) deniedLater(path string, readsOnly bool) (LaterRule, bool) {
	for _, w := range p.Writable {
		if Under(path, w) {
			return LaterRule{}, false
		}
	}
	for _, r := range p.Later {
		if readsOnly && !r.Read || !r.covers(path) {
			continue
		}
		if r.Read && r.Glob == nil && p.reopened(path, r.Path) {
			continue
		}
		if r.Read && r.Glob != nil && readsOnly {
			// A grant at or beneath the match re-opens it for reading
			// (reads.go); for writing, a pattern beats every grant.
			if _, hidden := p.readPatternHides(path); !hidden {
				continue
			}
		}
		return r, true
	}
	return LaterRule{}, false
}

// SpelledReads returns the literal denyRead entries kept as spelled
// through a symlink in a writable tree: what each denies is where its
// path leads now, which the host may change by re-aiming the link.
func (p *Policy) SpelledReads() []LaterRule {
	var out []LaterRule
	for _, r := range p.Later {
		if r.Read && r.Glob == nil && r.links != nil {
			out = append(out, r)
		}
	}
	return out
}

// Above reports whether what the entry denies may lie strictly beneath
// dir (absolute, symlink-free): its path, or a match of its pattern
// (dir at or above the pattern's directory, or where a match's
// directory may be). A symlink made at dir may send it elsewhere.
func (r LaterRule) Above(dir string) bool {
	if r.Glob == nil {
		return r.Path != dir && Under(r.Path, dir)
	}
	if Under(r.Root, dir) {
		return true
	}
	return Under(dir, r.Root) && r.Glob.MayHoldMatch(r.asPattern(dir))
}

// Redirects reports whether a symlink at dir (absolute, symlink-free)
// leading to to (where it leads, absolute; "" when that cannot be told)
// may send what the entry denies elsewhere: a literal entry's path
// beneath dir; a match of its pattern beneath dir whose image beneath to
// does not match (a link between two places a pattern treats alike, such
// as two directories under **/.env's, is let be).
func (r LaterRule) Redirects(dir, to string) bool {
	if !r.Above(dir) {
		return false
	}
	if r.Glob == nil || to == "" || Under(r.Root, dir) {
		return true
	}
	return !r.Glob.KeepsMatches(r.asPattern(dir), r.asPattern(to))
}

// asPattern is p as the pattern spells its directory (Root is that
// directory with its symlinks resolved).
func (r LaterRule) asPattern(p string) string {
	if r.Root != "" && Under(p, r.Root) {
		return r.Glob.Root() + strings.TrimPrefix(p, r.Root)
	}
	return p
}

// CoversPath reports whether the entry covers path (absolute,
// symlink-free), whatever its grants.
func (r LaterRule) CoversPath(path string) bool { return r.covers(path) }

func (r LaterRule) covers(path string) bool {
	if r.Glob == nil {
		return Under(path, r.Path)
	}
	if r.Root != "" && Under(path, r.Root) && r.Root != r.Glob.Root() {
		path = r.Glob.Root() + strings.TrimPrefix(path, r.Root)
	}
	return r.Glob.MatchOrBeneath(path)
}

// reopened reports whether a grant at least as specific as deny covers
// path: at equal specificity an allow beats a deny (spec c.1), as View
// says.
func (p *Policy) reopened(path, deny string) bool {
	for _, rs := range [][]Rule{p.Reads, p.Writes} {
		for _, a := range rs {
			if a.Allow && Under(a.Path, deny) && Under(path, a.Path) {
				return true
			}
		}
	}
	return false
}

// View is what the command may do at a path.
type View struct {
	Readable bool `json:"readable"`
	Writable bool `json:"writable"`
}

// View returns what the command may do at path (absolute, symlink-free).
// Reads: the most specific rule wins, and at equal specificity an allow
// beats a deny (spec c.1) — so a denied file inside an allowRead
// directory stays hidden, where the reference leaks it. Writes: writable
// under some allowWrite and under no denyWrite or protected name, at any
// height (denyWrite wins even above the allow).
func (p *Policy) View(path string) View {
	if p.Disabled {
		return View{Readable: true, Writable: true}
	}
	p.index()
	return viewAt(path, p.reads, p.writes)
}

// Why names the rules set at path itself, for the readers of a plan.
func (p *Policy) Why(path string) []string {
	p.index()
	var whys []string
	seen := map[string]bool{}
	for _, r := range append(append([]Rule(nil), p.reads[path]...), p.writes[path]...) {
		if !seen[r.Why] {
			seen[r.Why] = true
			whys = append(whys, r.Why)
		}
	}
	return whys
}

// Decider returns the rule that decides path's view: the deepest read
// rule at or above it, and every write rule at or above it.
func (p *Policy) Decider(path string) (read []Rule, write []Rule) {
	p.index()
	decided := false
	ancestors(path, func(a string) bool {
		if rs, ok := p.reads[a]; ok && !decided {
			decided = true
			read = rs
		}
		write = append(write, p.writes[a]...)
		return true
	})
	return read, write
}

func (p *Policy) index() {
	if p.reads == nil {
		p.reads, p.writes = index(p.Reads), index(p.Writes)
	}
}

// Under reports whether path is base or lies beneath it (both absolute
// and clean).
func Under(path, base string) bool { return pathguard.Under(path, base) }

// maxGlobVisits bounds the walk that matches one glob against the disk.
const maxGlobVisits = 1_000_000

// Build computes the policy of s in env. It reads the disk (to resolve
// symlinks, match globs and find protected names) but changes nothing.
// env's paths are as this system spells them; the policy's are in the
// slash form (config.FromOS).
func Build(s *config.Settings, env Env) (*Policy, error) {
	if env.Dirs == nil {
		env.Dirs = OSDirs{}
	}
	b := &builder{osHome: env.Home, osCwd: env.Cwd}
	var err error
	if env, err = slashEnv(env); err != nil {
		return nil, err
	}
	b.env, b.pol = env, &Policy{Private: env.Private, PrivateFiles: env.PrivateFiles, Writable: env.Writable, Home: env.Home}
	fsys := s.Filesystem
	if fsys.Disabled {
		b.pol.Disabled = true
		return b.pol, nil
	}
	for _, w := range env.Writable {
		b.writes = append(b.writes, Rule{Path: w, Allow: true, Why: "srt: per-run temp dir"})
	}
	if err := b.add("allowWrite", fsys.AllowWrite, true, true); err != nil {
		return nil, err
	}
	if err := b.add("denyWrite", fsys.DenyWrite, false, true); err != nil {
		return nil, err
	}
	if err := b.add("denyRead", fsys.DenyRead, false, false); err != nil {
		return nil, err
	}
	if err := b.add("allowRead", fsys.AllowRead, true, false); err != nil {
		return nil, err
	}
	b.addDefaultWritable()
	// A writable path is readable too, also inside a denied area (spec c.6).
	for _, w := range b.writes {
		if w.Allow {
			b.reads = append(b.reads, Rule{Path: w.Path, Allow: true, Why: w.Why})
		}
	}
	b.protect(s)
	b.expandRootDeny()
	b.pol.Reads, b.pol.Writes, b.pol.Links = b.reads, b.writes, b.links
	b.spelled()
	b.readGuard()
	return b.pol, nil
}

type builder struct {
	env Env // in the slash form
	// osHome and osCwd are Env's as given, as config.Expand reads them.
	osHome, osCwd string
	pol           *Policy
	reads         []Rule
	writes        []Rule
	links         []Link
}

// slashEnv is env with its paths in the slash form, and its directory
// reader given them as the system spells them. On POSIX it is env.
func slashEnv(env Env) (Env, error) {
	if !windowsPaths {
		return env, nil
	}
	var bad error
	conv := func(what, p string) string {
		if p == "" || bad != nil {
			return p
		}
		s, err := config.FromOS(p)
		if err != nil {
			bad = fmt.Errorf("srt's filesystem policy: the %s %w", what, err)
		}
		return s
	}
	convAll := func(what string, ps []string) []string {
		out := make([]string, len(ps))
		for i, p := range ps {
			out[i] = conv(what, p)
		}
		return out
	}
	env.Home, env.Cwd, env.Private = conv("home", env.Home), conv("working directory", env.Cwd), conv("run directory", env.Private)
	env.Writable, env.PrivateFiles = convAll("writable directory", env.Writable), convAll("run file", env.PrivateFiles)
	env.Dirs = osDirs{env.Dirs}
	return env, bad
}

func (b *builder) skip(rule, why string) {
	b.pol.Skipped = append(b.pol.Skipped, Skip{Rule: rule, Why: why})
}
