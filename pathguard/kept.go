package pathguard

import (
	"path"
	"slices"
	"strings"
)

// A repository's hooks are not only its .git/hooks, which the name
// rules keep: core.hooksPath puts them anywhere (husky's .husky/_ in the
// work tree), a hook may be a symlink to a script of the project's, and
// a config may include another file, read as its config. Hooks is what
// the guard keeps of one repository's hooks, read from its git
// directory through a Root.

// Root is the command's root as the hook decisions read it, by absolute
// paths resolved as the kernel resolves them there (symlinks followed,
// never out of the root).
type Root interface {
	// ReadFile reads the regular file p, at most limit bytes.
	ReadFile(p string, limit int) ([]byte, error)
	// Resolve returns where p leads now, if it exists.
	Resolve(p string) (string, bool)
	// Links lists the symlinks of the directory p, by name, with their
	// targets.
	Links(p string) map[string]string
}

// Hooks is what the guard keeps of one repository's hooks: the
// directories core.hooksPath names, whose contents are its hooks, and
// the files kept one by one (Targets, each kept for Why): where the
// symlinks among its hooks lead, the files its config includes, a
// hook's name where core.hooksPath names the work tree or above, the
// scripts husky's hooks run.
type Hooks struct {
	Dirs    []string
	Targets []string
	Why     []string
	// Names are the relative core.hooksPath values, by component: git
	// in a bare repository (core.bare, which a config may set) takes
	// them from the directory it runs in, so such a directory is kept
	// anywhere in the work tree.
	Names [][]string
}

// Keep adds paths to the targets, each kept for why.
func (h *Hooks) Keep(why string, paths ...string) {
	for _, p := range paths {
		h.Targets = append(h.Targets, p)
		h.Why = append(h.Why, why)
	}
}

// Merge adds what o keeps that h does not.
func (h *Hooks) Merge(o *Hooks) {
	for _, d := range o.Dirs {
		if !slices.Contains(h.Dirs, d) {
			h.Dirs = append(h.Dirs, d)
		}
	}
	for i, t := range o.Targets {
		if !slices.Contains(h.Targets, t) {
			h.Keep(o.Why[i], t)
		}
	}
	for _, v := range o.Names {
		if !slices.ContainsFunc(h.Names, func(w []string) bool { return slices.Equal(v, w) }) {
			h.Names = append(h.Names, v)
		}
	}
}

// Empty reports whether h keeps nothing.
func (h *Hooks) Empty() bool { return len(h.Dirs) == 0 && len(h.Targets) == 0 && len(h.Names) == 0 }

// Placed reports whether h keeps hooks by where they are (a
// core.hooksPath directory, a file kept), beyond the hooks directory's
// names: the repository's .git may not be moved away, where the guard
// would no longer find them around the work tree.
func (h *Hooks) Placed() bool { return h != nil && (len(h.Dirs) > 0 || len(h.Targets) > 0) }

// Holds returns what keeps full from being made or written when it is a
// hook of the repository at tree: the path kept and why. full lies
// beneath a directory core.hooksPath names, is a file kept, or lies in a
// directory a relative core.hooksPath names anywhere in the work tree.
func (h *Hooks) Holds(tree, full string) (kept, why string, ok bool) {
	for _, d := range h.Dirs {
		if Under(full, d) {
			return d, "a repository's hooks directory (core.hooksPath of " + tree + "): " + d, true
		}
	}
	for i, t := range h.Targets {
		if Under(full, t) {
			return t, h.Why[i] + " (of the repository at " + tree + "): " + t, true
		}
	}
	rel := RelParts(tree, full)
	for _, v := range h.Names {
		for i := 0; i+len(v) <= len(rel); i++ {
			if slices.Equal(rel[i:i+len(v)], v) {
				d := path.Join(tree, path.Join(rel[:i+len(v)]...))
				return d, "a repository's hooks directory (core.hooksPath " + path.Join(v...) + " of " + tree + ", where a bare repository's git would take it): " + d, true
			}
		}
	}
	return "", "", false
}

// Beneath reports whether a directory moved to full, in the work tree
// tree, would bring names beneath it that are h's hooks (a hooks
// directory, a file kept), or end with the start of a relative
// core.hooksPath: moved whole, they would appear without a call the
// guard judges.
func (h *Hooks) Beneath(tree, full string) bool {
	for _, list := range [][]string{h.Dirs, h.Targets} {
		for _, p := range list {
			if Under(p, full) {
				return true
			}
		}
	}
	rel := RelParts(tree, full)
	for _, v := range h.Names {
		for j := 1; j <= len(v) && j <= len(rel); j++ {
			if slices.Equal(rel[len(rel)-j:], v[:j]) {
				return true
			}
		}
	}
	return false
}

// FirstNames are the first components of h's relative core.hooksPath
// values: a directory moved into the work tree holding an entry by one
// of them may bring such a hooks directory in.
func (h *Hooks) FirstNames() map[string]bool {
	first := map[string]bool{}
	for _, v := range h.Names {
		first[v[0]] = true
	}
	return first
}

// RelParts is full's components beneath tree (none for tree itself).
func RelParts(tree, full string) []string {
	rest := strings.TrimPrefix(strings.TrimPrefix(full, tree), "/")
	if rest == "" || !Under(full, tree) {
		return nil
	}
	return strings.Split(rest, "/")
}

// GitFileTarget reads a .git file at tree as git's read_gitfile_gently
// does: "gitdir: " and the path, trailing line ends dropped (spaces
// kept, and nothing from a NUL on), a relative one beneath tree as
// spelled (the kernel resolves it, symlinks before ".."); ok is false
// for what git would refuse.
func GitFileTarget(tree string, content []byte) (string, bool) {
	named, ok := strings.CutPrefix(strings.TrimRight(string(content), "\r\n"), "gitdir: ")
	named, _, _ = strings.Cut(named, "\x00") // git reads the path as a C string
	if !ok || named == "" {
		return "", false
	}
	if !strings.HasPrefix(named, "/") {
		named = tree + "/" + named
	}
	return named, true
}

// HomeRelative reads a path git expands ("~/…" is home's); ok is false
// for what the guard does not follow (another user's "~user", no home,
// nothing).
func HomeRelative(v, home string) (string, bool) {
	switch {
	case v == "":
		return "", false
	case v == "~" || strings.HasPrefix(v, "~/"):
		return home + v[1:], home != ""
	case strings.HasPrefix(v, "~"):
		return "", false
	}
	return v, true
}

// Spellings are the paths at which what p names is kept: p as it is
// spelled, read lexically (a symlink on its way may be replaced by a
// directory, which the guard does not see: unlink is not judged), and
// where it leads now, resolved as the kernel does (symlinks before
// "..").
func Spellings(r Root, p string) []string {
	lex := path.Clean(p)
	if real := resolvedExisting(r, p); real != lex {
		return []string{lex, real}
	}
	return []string{lex}
}

// resolvedExisting is where p leads in r, resolved as the kernel does:
// its longest existing part, the rest as spelled.
func resolvedExisting(r Root, p string) string {
	if real, ok := r.Resolve(p); ok {
		return real
	}
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return path.Clean("/" + p)
	}
	d := resolvedExisting(r, p[:i])
	switch base := p[i+1:]; base {
	case "", ".":
		return d
	case "..":
		return path.Dir(d)
	default:
		return path.Join(d, base)
	}
}

// HookReader reads repositories' hooks in a root.
type HookReader struct {
	Root Root
	// Home is the home directory git expands "~/" to ("" none).
	Home string
	// Extra are core.hooksPath values that hold for every repository
	// (the host's global and system configs, read at launch).
	Extra []string
}

// ConfigHooksPaths is ConfigHooksPaths in the root: an include is kept
// at each of its spellings.
func (hr HookReader) ConfigHooksPaths(name string, included *[]string) []string {
	return ConfigHooksPaths(name, hr.Root.ReadFile, func(inc, from string) (string, []string, bool) {
		inc, ok := HomeRelative(inc, hr.Home)
		if !ok {
			return "", nil, false
		}
		if !strings.HasPrefix(inc, "/") {
			inc = path.Dir(from) + "/" + inc
		}
		return inc, Spellings(hr.Root, inc), true
	}, included)
}

// Tree reads the hooks of the repository at the work tree tree: its git
// directory (tree/.git, or what its .git file, content gitFile, names
// when isFile). Nil: it has none the guard can find.
func (hr HookReader) Tree(tree string, gitFile []byte, isFile bool) *Hooks {
	gitDir := tree + "/.git"
	if isFile {
		named, ok := GitFileTarget(tree, gitFile)
		if !ok {
			return nil
		}
		gitDir = named
	}
	gitDir, ok := hr.Root.Resolve(gitDir)
	if !ok {
		return nil
	}
	return hr.GitDir(tree, gitDir)
}

// GitDir reads the hooks of the repository whose git directory is gitDir
// (resolved) and whose work tree is tree (for a bare repository, gitDir
// itself: git takes a relative core.hooksPath from the directory it runs
// in, there): its common directory, the core.hooksPath values of its
// configs (and what they include) or else the common directory's hooks,
// and the symlinks among them.
func (hr HookReader) GitDir(tree, gitDir string) *Hooks {
	common := gitDir
	if c, err := hr.Root.ReadFile(gitDir+"/commondir", 4096); err == nil {
		// As git reads it: trailing line ends dropped, a relative path
		// beneath the git directory, resolved as the kernel does.
		named, _, _ := strings.Cut(strings.TrimRight(string(c), "\r\n"), "\x00")
		if !strings.HasPrefix(named, "/") {
			named = gitDir + "/" + named
		}
		if real, ok := hr.Root.Resolve(named); ok {
			common = real
		}
	}
	// The git directory's own config and hooks count too, where a
	// commondir names another: the command may have written that
	// commondir, and may remove it again (unlink is not judged).
	configs := []string{common + "/config", gitDir + "/config.worktree"}
	hooksDirs := []string{common + "/hooks"}
	if common != gitDir {
		configs = append(configs, gitDir+"/config")
		hooksDirs = append(hooksDirs, gitDir+"/hooks")
	}
	var values, included []string
	for _, cfg := range configs {
		values = append(values, hr.ConfigHooksPaths(cfg, &included)...)
	}
	values = append(values, hr.Extra...)
	// A file its config includes is read as its config: kept as one
	// (the command could give it core.fsmonitor).
	h := &Hooks{}
	h.Keep("a file its config includes, read as its config", included...)
	for _, v := range values {
		v, ok := HomeRelative(v, hr.Home)
		if !ok {
			continue
		}
		if !strings.HasPrefix(v, "/") {
			if c := path.Clean(v); c != "." && c != ".." && !strings.HasPrefix(c, "../") && !strings.Contains(v, "..") {
				h.Names = append(h.Names, strings.Split(c, "/"))
			}
			v = tree + "/" + v // resolved as the kernel does (Spellings)
		}
		for _, d := range Spellings(hr.Root, v) {
			hooksDirs = append(hooksDirs, d)
			if Under(tree, d) {
				// The work tree itself, or above it: only the hooks'
				// own names there are git's to run.
				for _, n := range GitHookNames {
					h.Keep("a hook, where core.hooksPath names the work tree or above", path.Join(d, n))
				}
				continue
			}
			h.Dirs = append(h.Dirs, d)
			if path.Base(d) == HuskyHooks {
				// husky's hooks there run the same-named scripts one
				// directory up: kept whether or not husky has made them
				// yet (or the command removed them, which unlink lets
				// it, for husky to make again).
				for _, n := range GitHookNames {
					h.Keep("a script husky's hook of that name runs", path.Join(path.Dir(d), n))
				}
			}
		}
	}
	for _, d := range hooksDirs {
		links := hr.Root.Links(d)
		names := make([]string, 0, len(links))
		for n := range links {
			names = append(names, n)
		}
		slices.Sort(names)
		for _, n := range names {
			target := links[n]
			if !strings.HasPrefix(target, "/") {
				target = d + "/" + target
			}
			h.Keep("a hook's script, which "+path.Join(d, n)+" is a symlink to", Spellings(hr.Root, target)...)
		}
	}
	return h
}
