package policy

import (
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/pathguard"
)

// protect adds the protected names found under cwd, home and every
// writable root, down to mandatoryDenySearchDepth. A name that is a
// symlink is protected where it leads: every symlink on the way is pinned
// (a command could otherwise re-aim one), the target is read-only, and a
// link whose target is missing is masked.
func (b *builder) protect(s *config.Settings) {
	roots := map[string]bool{}
	for _, r := range []string{b.env.Cwd, b.env.Home} {
		if r == "" {
			continue
		}
		if real, err := evalSymlinks(r); err == nil {
			roots[real] = true
		}
	}
	for _, w := range b.writes {
		if w.Allow {
			roots[w.Path] = true
		}
	}
	sorted := make([]string, 0, len(roots))
	for r := range roots {
		sorted = append(sorted, r)
	}
	sort.Strings(sorted)
	seen := map[string]bool{}
	deny := func(p, why string) {
		if !seen[p] {
			seen[p] = true
			b.writes = append(b.writes, Rule{Path: p, Allow: false, Why: why})
		}
	}
	linked := map[string]bool{}
	hooks := hooksContext{home: b.env.Home, guardReads: b.env.GuardKeepsConfigs}
	var hits []found
	global, included := globalHooksPaths(b.env.Dirs, b.env.Home)
	for _, inc := range included {
		// A file the host's config includes is read as its config.
		if b.writableSomewhereUnder(resolveExisting(inc)) {
			hits = append(hits, hooksDirFound(b.env.Dirs, inc)...)
		}
	}
	for _, v := range global {
		// The host's own core.hooksPath: where it is absolute, that one
		// directory; relative, that directory in every repository.
		if p, ok := hooksPathAt(v, b.env.Home, ""); ok && path.IsAbs(p) {
			if b.writableSomewhereUnder(resolveExisting(p)) {
				hits = append(hits, hooksDirFound(b.env.Dirs, p)...)
			}
		} else if ok {
			hooks.relative = append(hooks.relative, p)
			b.pol.TreeHooksPaths = append(b.pol.TreeHooksPaths, p)
			if p != "." && p != ".." && !strings.HasPrefix(p, "../") {
				b.pol.HooksPaths = append(b.pol.HooksPaths, p)
			}
		}
	}
	for _, root := range sorted {
		if !b.writableSomewhereUnder(root) {
			continue // nothing beneath can be written: no name there can change
		}
		hits = append(hits, findProtected(b.env.Dirs, root, s.MandatoryDenySearchDepth, s.Filesystem.AllowGitConfig, b.writableSomewhereUnder, hooks)...)
	}
	for _, f := range hits {
		switch {
		case f.repo:
			b.pol.Repos = append(b.pol.Repos, f.path)
			continue
		case f.bare:
			b.pol.BareRepos = append(b.pol.BareRepos, f.path)
			continue
		}
		{
			why := "protected name " + config.ToOS(f.path)
			if f.inside != "" {
				why = "protected name " + config.ToOS(f.inside) + " (a symlink in it)"
			}
			if f.missing {
				// A hooks directory (core.hooksPath) not made yet: the
				// guard keeps it from being made, as a denyWrite entry's
				// path that does not exist yet.
				b.pol.Later = append(b.pol.Later, LaterRule{Path: config.Clean(resolveFollowing(f.path)), Why: why + " (a repository's hooks directory, core.hooksPath)"})
				continue
			}
			if f.later {
				if strings.Contains(f.path, "*") {
					b.laterPattern(f.path, why)
					continue
				}
				if target := resolveFollowing(f.path); target != f.path && path.IsAbs(target) {
					b.pol.Later = append(b.pol.Later, LaterRule{Path: config.Clean(target), Why: why + " (where it leads)"})
				}
				continue
			}
			if f.config && !f.linked && b.env.GuardKeepsConfigs {
				// Kept by name: git may replace it through the guard.
				continue
			}
			if _, _, anchor := (pathguard.Rules{}).JudgeWhere(f.path); anchor != "" && !f.linked && b.env.GuardKeepsConfigs {
				// A shell's startup file or a project's configuration:
				// kept by name, by the guard, which refuses every write
				// there and lets it be removed (rm -rf of a package that
				// ships a .vscode), where a mount would keep it too.
				continue
			}
			if !f.linked {
				deny(f.path, why) // no symlink on its way: the walk went through real directories
				continue
			}
			real, err := b.follow(f.path, why, linked)
			switch {
			case err == nil && !f.linkOnly:
				deny(real, why)
				// The mount keeps the file there now; the guard keeps
				// the name, for a file the host renames over it.
				b.pol.Later = append(b.pol.Later, LaterRule{Path: real, Why: why + " (where it leads)", Existed: true})
			case err != nil && !f.linkOnly:
				// A protected name that leads nowhere yet (a hook linked
				// to a script not written): what the host would run is
				// whatever appears where it leads, so that path is the
				// guard's to keep, as a denyWrite entry's that does not
				// exist yet.
				if target := resolveFollowing(f.path); target != f.path && path.IsAbs(target) {
					b.pol.Later = append(b.pol.Later, LaterRule{Path: config.Clean(target), Why: why + " (where it leads)"})
				}
			}
		}
	}
}

// follow resolves a protected path, recording every symlink on its way:
// each is pinned, and the first is masked when the path leads nowhere.
func (b *builder) follow(path, why string, linked map[string]bool) (string, error) {
	real, links, err := resolveChain(path)
	for i, l := range links {
		if linked[l] {
			continue
		}
		linked[l] = true
		kind := PinLink
		if err != nil && i == 0 {
			kind = MaskLink // it leads nowhere now: nothing may be created through it
		}
		b.links = append(b.links, Link{Path: l, Kind: kind, Why: why})
	}
	if err != nil && len(links) == 0 {
		b.skip(why, fmt.Sprintf("cannot be resolved: %v", err))
	}
	return real, err
}

// maxLinkWalk bounds the entries walkLinks reads in one protected
// directory.
const maxLinkWalk = 10_000

// walkLinks calls fn for every symlink beneath dir (not following any).
func walkLinks(dirs DirReader, dir string, fn func(string)) {
	seen := 0
	var walk func(string)
	walk = func(d string) {
		var subdirs []string
		dirs.ReadDir(d, func(name []byte, kind Kind) {
			if seen++; seen > maxLinkWalk {
				return
			}
			switch kind {
			case KindLink:
				fn(path.Join(d, string(name)))
			case KindDir:
				subdirs = append(subdirs, path.Join(d, string(name)))
			}
		})
		for _, s := range subdirs {
			walk(s)
		}
	}
	walk(dir)
}

// maxLinks bounds the symlinks resolveChain follows, as the kernel does.
const maxLinks = 40

// resolveChain resolves path like filepath.EvalSymlinks and also returns
// every symlink it went through, in order: the lexical path of each link
// object, its directory resolved. With an error (a missing target, a
// loop), the links up to the failure are returned.
//
// It starts at p's volume ("/" on POSIX) and never climbs above it: on
// Windows, ".." at C:\ is C:\, and a target on another volume (D:\x)
// starts again at that volume's root. A junction is a link here (lstat).
func resolveChain(p string) (string, []string, error) {
	var links []string
	resolved := volume(p)
	if resolved == "" {
		return "", nil, fmt.Errorf("%s: not an absolute path", p)
	}
	rest := strings.Split(strings.TrimPrefix(strings.TrimPrefix(config.Clean(p), resolved), "/"), "/")
	for len(rest) > 0 {
		part := rest[0]
		rest = rest[1:]
		switch part {
		case "", ".":
			continue
		case "..":
			resolved = config.Dir(resolved)
			continue
		}
		next := path.Join(resolved, part)
		fi, err := lstat(next)
		if err != nil {
			return "", links, err
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			resolved = next
			continue
		}
		if len(links) == maxLinks {
			return "", links, fmt.Errorf("%s: too many levels of symbolic links", p)
		}
		links = append(links, next)
		target, err := readlink(next)
		if err != nil {
			return "", links, err
		}
		if path.IsAbs(target) {
			resolved = volume(target)
			target = strings.TrimPrefix(target, resolved)
		}
		rest = append(strings.Split(target, "/"), rest...)
	}
	return resolved, links, nil
}

// writableSomewhereUnder reports whether some allow-write rule covers root
// or lies beneath it.
func (b *builder) writableSomewhereUnder(root string) bool {
	for _, w := range b.writes {
		if w.Allow && (Under(root, w.Path) || Under(w.Path, root)) {
			return true
		}
	}
	return false
}

// found is a protected name the walk found: protect what path leads to,
// or, with linkOnly, only the symlinks on its way (a symlinked .git or
// .claude, whose protected contents are found too). linked says that a
// symlink is on its way or at its end; inside, that it is a symlink in
// the protected directory inside.
type found struct {
	path     string
	linkOnly bool
	linked   bool
	inside   string
	config   bool // a git directory's config file
	// later: it does not exist, and a symlink on its way leads where the
	// guard must keep it from being made (not masked: the link is an
	// ordinary directory's, ~/.config).
	later bool
	// missing: a hooks directory core.hooksPath names, which does not
	// exist: the guard keeps it from being made.
	missing bool
	// repo: path is a work tree whose .git the walk found (a directory,
	// a file, a symlink); bare: a git directory not called .git (HEAD,
	// objects and refs), such as a bare repository. Neither is protected
	// itself: the guard reads their hooks before the first write.
	repo, bare bool
}

// hooksContext is what the walk needs to find a repository's hooks
// directory where core.hooksPath puts it: home for "~", and the
// relative values of the host's own config, which apply in every
// repository.
type hooksContext struct {
	home     string
	relative []string
	// guardReads: the backend's path guard reads each repository's
	// hooks itself, when it first judges a name there (at any depth),
	// so the walk does not (Env.GuardKeepsConfigs).
	guardReads bool
}

// configHooksPaths is ConfigHooksPaths on the host's disk.
func configHooksPaths(dirs DirReader, name, home string, included *[]string) []string {
	return pathguard.ConfigHooksPaths(name, dirs.ReadFile, func(inc, from string) (string, []string, bool) {
		p, ok := hooksPathAt(inc, home, config.Dir(from))
		return p, []string{p}, ok
	}, included)
}

// globalHooksPaths returns the core.hooksPath values of the host's own
// git config: the system's, the user's (~/.gitconfig and
// ~/.config/git/config) and what they include.
func globalHooksPaths(dirs DirReader, home string) (hooks, included []string) {
	var files []string
	if !windowsPaths {
		// Git for Windows keeps its system config in its own install
		// directory, which no rule makes writable.
		files = append(files, "/etc/gitconfig")
	}
	if home != "" {
		files = append(files, path.Join(home, ".gitconfig"), path.Join(home, ".config", "git", "config"))
	}
	for _, f := range files {
		hooks = append(hooks, configHooksPaths(dirs, f, home, &included)...)
	}
	return hooks, included
}

// hooksPathAt resolves a path git reads from a config (core.hooksPath,
// include.path) as git does: "~/" is home, an absolute path is itself,
// and a relative one is beneath base ("" keeps it relative). ok is false
// for what the launch does not follow (another user's "~user").
//
// On Windows v is as Git for Windows reads it: C:/x or C:\x is absolute,
// '\' separates, and a path rooted without a drive (/x) lies in Git's
// own install directory, which the launch does not know.
func hooksPathAt(v, home, base string) (string, bool) {
	if windowsPaths && v != "" {
		if filepath.IsAbs(v) {
			p, err := config.FromOS(v)
			return p, err == nil
		}
		if v = filepath.ToSlash(v); path.IsAbs(v) || filepath.VolumeName(v) != "" {
			return "", false
		}
	}
	switch {
	case v == "":
		return "", false
	case v == "~" || strings.HasPrefix(v, "~/"):
		if home == "" {
			return "", false
		}
		return path.Join(home, v[1:]), true
	case strings.HasPrefix(v, "~"):
		return "", false
	case path.IsAbs(v):
		return config.Clean(v), true // not beneath base: an absolute include is where it says
	case base != "":
		return config.Join(base, v), true
	}
	return config.Clean(v), true
}

// hooksDirFound is the hooks directory (or hook) at p (core.hooksPath)
// as the walk finds one: the directory and the symlinks in it, or,
// where nothing is yet, the path the guard keeps from being made.
func hooksDirFound(dirs DirReader, p string) []found {
	if _, err := lstat(p); err != nil {
		return []found{{path: p, missing: true}}
	}
	real, err := evalSymlinks(p)
	linked := err != nil || real != p
	if fi, err := stat(p); err == nil && fi.IsDir() {
		return protectedDir(dirs, p, linked)
	}
	return []found{{path: p, linked: linked}} // a hook itself, or a link that leads nowhere yet
}

// repoHooksPaths lists the hooks directories core.hooksPath gives the
// repository whose git directory is gitDir (read at inside) and whose
// work tree is tree: its own config's values and the host's relative
// ones, beneath the work tree (absolute ones are the launch's, once).
func repoHooksPaths(dirs DirReader, inside, tree string, hc hooksContext) []found {
	var included []string
	values := configHooksPaths(dirs, path.Join(inside, "config"), hc.home, &included)
	values = append(values, configHooksPaths(dirs, path.Join(inside, "config.worktree"), hc.home, &included)...)
	values = append(values, hc.relative...)
	var out []found
	for _, inc := range included {
		out = append(out, hooksDirFound(dirs, inc)...) // read as its config
	}
	seen := map[string]bool{}
	for _, v := range values {
		p, ok := hooksPathAt(v, hc.home, tree)
		if !ok || seen[p] {
			continue
		}
		seen[p] = true
		// filepath.Rel reads the slash form on Windows too, as rooted
		// paths with no volume of their own.
		if rel, err := filepath.Rel(p, tree); err == nil && (rel == "." || !strings.HasPrefix(rel, "..")) {
			// The work tree itself, or a directory above it: only the
			// hooks' own names there are git's to run.
			for _, h := range pathguard.GitHookNames {
				out = append(out, hooksDirFound(dirs, path.Join(p, h))...)
			}
			continue
		}
		out = append(out, hooksDirFound(dirs, p)...)
		if path.Base(p) == pathguard.HuskyHooks {
			for _, h := range pathguard.GitHookNames {
				out = append(out, hooksDirFound(dirs, path.Join(config.Dir(p), h))...)
			}
		}
	}
	return out
}

// findProtected walks root for protected names whose path relative to root
// has at most depth components (for .git/hooks and .claude/commands, the
// .git or .claude directory counts). Matching ignores case. A .git directory
// protects its hooks (and config, unless gitConfig), a .git file (a
// worktree or submodule pointer) protects itself; a .git or .claude that is
// a symlink to a directory is looked into like one.
//
// Only directories that hold something writable are read (relevant):
// a name where nothing can be written cannot change, so the walk costs
// nothing in a large read-only tree.
//
// Past the first parallelAfter directories (a small tree stays on one
// goroutine, which is faster there), directories are read by a few
// goroutines at once: the cost is the kernel's, per directory. The result
// is sorted.
const parallelAfter = 256

func findProtected(dirs DirReader, root string, depth int, gitConfig bool, relevant func(string) bool, hc hooksContext) []found {
	var (
		mu  sync.Mutex
		out []found
		wg  sync.WaitGroup
	)
	sem := make(chan struct{}, 2*runtime.GOMAXPROCS(0))
	var read atomic.Int64
	var walk func(dir string, level int)
	walk = func(dir string, level int) {
		if !relevant(dir) {
			return
		}
		read.Add(1)
		var hits []found
		var subdirs []string
		var marks int // git's marks seen: HEAD, objects, refs
		err := dirs.ReadDir(dir, func(name []byte, kind Kind) {
			switch string(name) { // no allocation: a conversion compared
			case "HEAD", "objects", "refs":
				marks++
			}
			// Every protected name starts with a dot: only those are
			// looked at, and only those and directories become strings.
			var lower string
			if name[0] == '.' {
				lower = strings.ToLower(string(name))
			}
			entry := func() string { return path.Join(dir, string(name)) }
			isDir, isLink := kind == KindDir, kind == KindLink
			switch {
			case lower == "":
			case (kind == KindRegular || isLink) && pathguard.ProtectedFile(lower):
				hits = append(hits, found{path: entry(), linked: isLink})
			case lower == ".git" && (isDir || isLink):
				p := entry()
				inside := p
				if isLink {
					real, err := evalSymlinks(p)
					fi, statErr := stat(p)
					if err != nil || statErr != nil || !fi.IsDir() {
						hits = append(hits, found{path: p, linked: true}) // a linked pointer file, or nothing
						return
					}
					hits = append(hits, found{path: p, linkOnly: true, linked: true})
					inside = real
				}
				hits = append(hits, gitProtected(dirs, p, inside, isLink, gitConfig)...)
				if !hc.guardReads {
					hits = append(hits, repoHooksPaths(dirs, inside, dir, hc)...)
				} else {
					hits = append(hits, found{path: dir, repo: true})
				}
				return // objects, refs and the index stay writable; nothing else inside is sourced
			case lower == ".git" && kind == KindRegular:
				hits = append(hits, found{path: entry()})
				if hc.guardReads {
					hits = append(hits, found{path: dir, repo: true})
				}
			case (isDir || isLink) && pathguard.ProtectedDir(lower):
				hits = append(hits, protectedDir(dirs, entry(), isLink)...)
				return
			case (isDir || isLink) && pathguard.IsProtectedFirst(lower):
				hits = append(hits, protectedPathsIn(dirs, entry(), lower, isLink)...)
			case (isDir || isLink) && lower == ".claude":
				p := entry()
				inside := p
				if isLink {
					real, err := evalSymlinks(p)
					hits = append(hits, found{path: p, linkOnly: true, linked: true})
					if err != nil {
						return
					}
					inside = real
				}
				for _, e := range protectedInClaude(dirs, inside) {
					if e.kind == KindRegular {
						hits = append(hits, found{path: path.Join(inside, e.name)}) // settings.json
					} else {
						hits = append(hits, protectedDir(dirs, path.Join(inside, e.name), false)...)
					}
				}
			}
			if isDir && level < depth {
				subdirs = append(subdirs, entry())
			}
		})
		if err != nil {
			return
		}
		if marks == 3 {
			hits = append(hits, found{path: dir, bare: true})
		}
		for _, p := range subdirs {
			if read.Load() < parallelAfter {
				walk(p, level+1)
				continue
			}
			select {
			case sem <- struct{}{}:
				wg.Add(1)
				go func() {
					defer wg.Done()
					defer func() { <-sem }()
					walk(p, level+1)
				}()
			default: // enough readers already: this one reads it
				walk(p, level+1)
			}
		}
		if len(hits) > 0 {
			mu.Lock()
			out = append(out, hits...)
			mu.Unlock()
		}
	}
	if depth >= 1 {
		walk(root, 1)
	}
	wg.Wait()
	sort.Slice(out, func(i, j int) bool { return out[i].path < out[j].path })
	return out
}

// gitProtected lists the protected entries of the .git directory at p
// (read at inside, where p leads; linked: through a symlink): hooks, and
// config unless gitConfig.
func gitProtected(dirs DirReader, p, inside string, linked, gitConfig bool) []found {
	var out []found
	names := []string{"hooks"}
	if !gitConfig {
		names = append(names, "config")
	}
	for _, n := range names {
		fi, err := lstat(path.Join(inside, n))
		if err != nil {
			continue
		}
		isLink := fi.Mode()&fs.ModeSymlink != 0
		isDir := fi.IsDir()
		if isLink {
			st, err := stat(path.Join(inside, n))
			isDir = err == nil && st.IsDir()
		}
		if isDir {
			out = append(out, protectedDir(dirs, path.Join(p, n), linked || isLink)...)
		} else {
			out = append(out, found{path: path.Join(p, n), linked: linked || isLink, config: n == "config"})
		}
	}
	return out
}

// protectedDir is a protected directory at p (a symlink, with link) and
// the symlinks beneath it: a hook linked to a script kept in the project
// leads to what the host runs too.
func protectedDir(dirs DirReader, p string, link bool) []found {
	out := []found{{path: p, linked: link}}
	dir := p
	if link {
		real, err := evalSymlinks(p)
		if err != nil {
			return out
		}
		dir = real
	}
	walkLinks(dirs, dir, func(l string) { out = append(out, found{path: l, linked: true, inside: p}) })
	return out
}

// protectedPathsIn finds, beneath dir p (named first, a symlink with
// link), the files that end a protected path beginning there. Through a
// symlink on the way, each is linked, for protect to resolve; and one
// that does not exist yet is named too, since what the host would read
// is whatever appears where the link leads (a ~/.config kept in a
// dotfiles repository), which the guard, judging by real paths, would
// not see by its names.
func protectedPathsIn(dirs DirReader, p, first string, link bool) []found {
	var out []found
	var walk func(at string, rest []string, linked bool)
	walk = func(at string, rest []string, linked bool) {
		if len(rest) == 0 {
			out = append(out, found{path: at, linked: linked})
			return
		}
		wild := slices.ContainsFunc(rest, func(c string) bool { return strings.Contains(c, "*") })
		if linked && wild {
			// Through a symlink (a dotfiles ~/.local), what a component
			// that stands for many names ("python*", "*.pth") matches
			// where it leads is the guard's to keep, now and later: a
			// pattern at the real path.
			out = append(out, found{path: path.Join(append([]string{at}, rest...)...), linked: true, later: true})
		}
		var names []string
		dirs.ReadDir(at, func(entry []byte, kind Kind) {
			if (kind == KindDir || kind == KindLink || len(rest) == 1 && kind == KindRegular) && pathguard.MatchComponent(rest[0], strings.ToLower(string(entry))) {
				names = append(names, string(entry))
			}
		})
		if len(names) == 0 {
			if linked && !wild {
				out = append(out, found{path: path.Join(append([]string{at}, rest...)...), linked: true, later: true})
			}
			return
		}
		for _, e := range names {
			q := path.Join(at, e)
			fi, err := lstat(q)
			walk(q, rest[1:], linked || err == nil && fi.Mode()&fs.ModeSymlink != 0)
		}
	}
	for _, pp := range pathguard.ProtectedPathParts() {
		if pp[0] == first {
			walk(p, pp[1:], link)
		}
	}
	return out
}

// claudeEntry is an entry of a .claude directory named by
// protectedClaude.
type claudeEntry struct {
	name string
	kind Kind
}

// protectedInClaude returns, from one read of the .claude directory
// dir, its entries whose names equal one of protectedClaude's ignoring
// case: directories and symlinks (commands, agents, hooks), and regular
// files (the settings files).
func protectedInClaude(dirs DirReader, dir string) []claudeEntry {
	var out []claudeEntry
	if dirs.ReadDir(dir, func(entry []byte, kind Kind) {
		if kind == KindOther {
			return
		}
		for _, name := range pathguard.ProtectedClaude() {
			if strings.EqualFold(string(entry), name) {
				out = append(out, claudeEntry{string(entry), kind})
				return
			}
		}
	}) != nil {
		return nil
	}
	return out
}

// Kind is what a directory entry is, as a DirReader reports it.
type Kind uint8

const (
	KindOther   Kind = iota
	KindDir          // a directory
	KindRegular      // a regular file
	KindLink         // a symlink, whatever it points to
)

// KindOf is the kind of an entry of type t (fs.DirEntry.Type).
func KindOf(t fs.FileMode) Kind {
	switch {
	case t.IsDir():
		return KindDir
	case t.IsRegular():
		return KindRegular
	case t&fs.ModeSymlink != 0:
		return KindLink
	}
	return KindOther
}

// DirReader reads a directory for the protected-name walk: fn gets every
// entry but "." and "..", with its name (valid only during the call) and
// kind, not following symlinks. The walk reads tens of thousands of
// directories in a big tree, so a backend passes its fastest reader.
type DirReader interface {
	ReadDir(dir string, fn func(name []byte, kind Kind)) error
	// ReadFile reads the file name, at most limit bytes.
	ReadFile(name string, limit int) ([]byte, error)
}

// OSDirs reads directories with os.ReadDir. On Windows a junction is
// reported as a link (see isJunction).
type OSDirs struct{}

// ReadFile implements DirReader.
func (OSDirs) ReadFile(name string, limit int) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)))
}

// ReadDir implements DirReader.
func (OSDirs) ReadDir(dir string, fn func(name []byte, kind Kind)) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		kind := KindOf(e.Type())
		if windowsPaths && isJunction(filepath.Join(dir, e.Name()), e.Type()) {
			kind = KindLink
		}
		fn([]byte(e.Name()), kind)
	}
	return nil
}

// laterPattern keeps, for the guard, a protected path with a component
// that stands for many names, spelled through a symlink (p: the part
// before the first such component a real directory's spelling, the rest
// the pattern): where it leads, as a pattern rooted at the real path.
func (b *builder) laterPattern(p, why string) {
	parts := strings.Split(p, "/")
	i := slices.IndexFunc(parts, func(c string) bool { return strings.Contains(c, "*") })
	root := resolveFollowing(strings.Join(parts[:i], "/"))
	if !path.IsAbs(root) {
		return
	}
	g, err := config.CompileGlob(path.Join(append([]string{root}, parts[i:]...)...))
	if err != nil {
		return
	}
	b.pol.Later = append(b.pol.Later, LaterRule{Glob: g, Pattern: g.String(), Root: root, Why: why + " (where it leads)"})
}
