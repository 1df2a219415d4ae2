package nsexec

import (
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-go/srt/pathguard"
	"github.com/srt-go/srt/policy"
)

// A repository's hooks are not only its .git/hooks, which the name
// rules keep: core.hooksPath puts them anywhere (husky's .husky/_ in the
// work tree), and a hook may be a symlink to a script of the project's.
// The launch's walk finds both in the repositories within
// mandatoryDenySearchDepth; the guard finds them in any repository a
// name it judges lies in, when it first judges a name there: the
// repositories around each directory are known by their .git (a
// directory, a symlink to one, or a file naming one), and each one's
// hooks by its config and its hooks directories, read in the command's
// root.

// repoHooks is what the guard keeps of one repository's hooks: the
// directories core.hooksPath names, whose contents are its hooks, and
// where the symlinks among its hooks lead, and the files its config
// includes (targets).
type repoHooks struct {
	dirs    []string
	targets []string
	why     []string // why each of targets is kept
	// names are the relative core.hooksPath values, by component: git
	// in a bare repository (core.bare, which a config may set) takes
	// them from the directory it runs in, so such a directory is kept
	// anywhere in the work tree.
	names [][]string
}

// keep adds paths to the targets, each kept for why.
func (h *repoHooks) keep(why string, paths ...string) {
	for _, p := range paths {
		h.targets = append(h.targets, p)
		h.why = append(h.why, why)
	}
}

// merge adds what o keeps that h does not.
func (h *repoHooks) merge(o *repoHooks) {
	for _, d := range o.dirs {
		if !slices.Contains(h.dirs, d) {
			h.dirs = append(h.dirs, d)
		}
	}
	for i, t := range o.targets {
		if !slices.Contains(h.targets, t) {
			h.keep(o.why[i], t)
		}
	}
	for _, v := range o.names {
		if !slices.ContainsFunc(h.names, func(w []string) bool { return slices.Equal(v, w) }) {
			h.names = append(h.names, v)
		}
	}
}

// keptHooks is what the guard keeps of tree's hooks: what reading its
// repository found now (h, nil for none) and everything it found there
// before in this run. What a repository keeps stays kept when its
// config changes, or its .git goes: the command could unset
// core.hooksPath (a config change the guard lets through, as it takes
// keys away), write the hooks of that directory, and leave them for
// the host's next git config core.hooksPath (a project's setup script,
// husky's install) to run.
func (k *call) keptHooks(tree string, h *repoHooks) *repoHooks {
	kept := k.gs.kept[tree]
	if h == nil || h.empty() {
		return kept
	}
	if kept == nil {
		if len(k.gs.kept) >= maxKeptTrees {
			return h // past the bound, a tree keeps only what it has now
		}
		kept = &repoHooks{}
		k.gs.kept[tree] = kept
	}
	kept.merge(h)
	for _, list := range [][]string{h.dirs, h.targets} {
		for _, p := range list {
			if !policy.Under(p, tree) && !slices.ContainsFunc(k.gs.outside, func(o outsideHook) bool { return o.path == p }) && len(k.gs.outside) < maxKeptTrees {
				k.gs.outside = append(k.gs.outside, outsideHook{path: p, tree: tree})
			}
		}
	}
	return kept
}

// outsideHook is a hooks directory or a hook's script a repository keeps
// outside its work tree (a core.hooksPath of ../shared-hooks, of an
// absolute path, a script linked from a hook): a write there names no
// work tree that would lead the guard to the repository.
type outsideHook struct{ path, tree string }

// readWalkRepos reads, once, the hooks of the repositories the launch's
// walk found (Policy.Repos), before the guard judges its first write.
func (k *call) readWalkRepos() {
	if k.gs.walkRead || k.pol.Guard == nil || k.pol.Guard.Policy == nil {
		return
	}
	k.gs.walkRead = true
	for _, tree := range k.pol.Guard.Policy.Repos {
		k.treesAround(tree) // which also tells a .git file from a directory
		k.hooksOf(tree)
	}
	for _, dir := range k.pol.Guard.Policy.BareRepos {
		if real, ok := k.resolved(dir); ok {
			k.keptHooks(real, k.gitDirHooks(real, real))
		}
	}
}

// maxKeptTrees bounds the work trees whose hooks are kept for the run.
const maxKeptTrees = 1 << 12

func (h *repoHooks) empty() bool {
	return len(h.dirs) == 0 && len(h.targets) == 0 && len(h.names) == 0
}

// hookTrees lists the work trees whose hooks hold for dir: those around
// it now (treesAround), and, after them, those that were once and kept
// hooks (keptHooks), though their .git is gone.
func (k *call) hookTrees(dir string) []string {
	trees := k.treesAround(dir)
	if len(k.gs.kept) == 0 {
		return trees
	}
	var gone []string
	for d := dir; ; d = path.Dir(d) {
		if _, ok := k.gs.kept[d]; ok && !slices.Contains(trees, d) {
			gone = append(gone, d)
		}
		if d == "/" || d == "." {
			break
		}
	}
	if gone == nil {
		return trees
	}
	slices.Reverse(gone)
	return append(trees[:len(trees):len(trees)], gone...)
}

// maxRepoDirs bounds the directories whose repositories the guard keeps
// (past it, it forgets them all and reads again).
const maxRepoDirs = 1 << 16

// hooksLater returns the rule that keeps full from being made or
// written when it is a hook of a repository it lies in: beneath a
// directory core.hooksPath names, or where one of the hooks' symlinks
// leads.
func (k *call) hooksLater(full string) (policy.LaterRule, bool) {
	if !strings.HasPrefix(full, "/") || full == "/" {
		return policy.LaterRule{}, false
	}
	k.readWalkRepos()
	for _, o := range k.gs.outside {
		if policy.Under(full, o.path) {
			return policy.LaterRule{Path: o.path, Why: "a repository's hooks, outside its work tree (core.hooksPath, a hook's script, an included config of " + o.tree + "): " + o.path}, true
		}
	}
	for _, tree := range k.hookTrees(path.Dir(full)) {
		h := k.hooksOf(tree)
		if h == nil {
			continue
		}
		for _, d := range h.dirs {
			if policy.Under(full, d) {
				return policy.LaterRule{Path: d, Why: "a repository's hooks directory (core.hooksPath of " + tree + "): " + d}, true
			}
		}
		for i, t := range h.targets {
			if policy.Under(full, t) {
				return policy.LaterRule{Path: t, Why: h.why[i] + " (of the repository at " + tree + "): " + t}, true
			}
		}
		rel := relParts(tree, full)
		for _, v := range h.names {
			for i := 0; i+len(v) <= len(rel); i++ {
				if slices.Equal(rel[i:i+len(v)], v) {
					d := path.Join(tree, path.Join(rel[:i+len(v)]...))
					return policy.LaterRule{Path: d, Why: "a repository's hooks directory (core.hooksPath " + path.Join(v...) + " of " + tree + ", where a bare repository's git would take it): " + d}, true
				}
			}
		}
	}
	return policy.LaterRule{}, false
}

// relParts is full's components beneath tree (none for tree itself).
func relParts(tree, full string) []string {
	rest := strings.TrimPrefix(strings.TrimPrefix(full, tree), "/")
	if rest == "" || !policy.Under(full, tree) {
		return nil
	}
	return strings.Split(rest, "/")
}

// namesMovedIn reports whether the directory src, moved to dst, would
// bring a relative core.hooksPath's directory into a work tree unseen:
// it holds an entry by that path's first name, or dst ends with the
// start of that path.
func (k *call) namesMovedIn(src place, dst string) bool {
	for _, tree := range k.hookTrees(path.Dir(dst)) {
		h := k.hooksOf(tree)
		if h == nil || len(h.names) == 0 {
			continue
		}
		first := map[string]bool{}
		for _, v := range h.names {
			first[v[0]] = true
		}
		r := treeRepos
		d, err := r.Tree.OpenDir(pathguard.Dir(src.dir), src.name, false)
		if err != nil {
			return true
		}
		held := r.TreeHas(d, pathguard.MaxMovedTree, nil, func(e fs.DirEntry) bool { return first[e.Name()] }, nil)
		r.Tree.Close(d)
		if held {
			return true
		}
	}
	return false
}

// hooksBeneath reports whether a directory moved to full would bring
// names beneath it that are a repository's hooks (a hooks directory, a
// hook's script, an included config): moved whole, they would appear
// without a call the guard judges, so the move gets EXDEV and mv copies
// it, one judged name at a time.
func (k *call) hooksBeneath(full string) bool {
	if !strings.HasPrefix(full, "/") || full == "/" {
		return false
	}
	for _, tree := range k.hookTrees(path.Dir(full)) {
		h := k.hooksOf(tree)
		if h == nil {
			continue
		}
		for _, list := range [][]string{h.dirs, h.targets} {
			for _, p := range list {
				if policy.Under(p, full) {
					return true
				}
			}
		}
		rel := relParts(tree, full)
		for _, v := range h.names {
			for j := 1; j <= len(v) && j <= len(rel); j++ {
				if slices.Equal(rel[len(rel)-j:], v[:j]) {
					return true
				}
			}
		}
	}
	k.readWalkRepos()
	for _, o := range k.gs.outside {
		if policy.Under(o.path, full) {
			return true
		}
	}
	// A work tree at or beneath full that kept hooks in this run, though
	// its .git is gone: moved away and back, it would bring them back
	// written.
	for tree, h := range k.gs.kept {
		if policy.Under(tree, full) && !h.empty() {
			return true
		}
	}
	return false
}

// keepsHooks reports whether the repository of the work tree tree has
// hooks the guard keeps beyond its hooks directory's names (a
// core.hooksPath, a hook's script, an included config): its .git may
// not be moved away, where the guard would no longer find them around
// the work tree (and a .git file made there could name it again).
func (k *call) keepsHooks(tree string) bool {
	h := k.hooksOf(tree)
	return h != nil && (len(h.dirs) > 0 || len(h.targets) > 0)
}

// treesAround lists the work trees that hold dir (an absolute,
// symlink-free path in the command's root), outermost first: the
// directories at or above it that hold a .git.
func (k *call) treesAround(dir string) []string {
	if trees, ok := k.gs.trees[dir]; ok {
		return trees
	}
	var trees []string
	if dir != "/" {
		parent := k.treesAround(path.Dir(dir))
		trees = parent[:len(parent):len(parent)]
	}
	if held, isFile := k.holdsGit(dir); held {
		trees = append(trees, dir)
		k.gs.gitFiles[dir] = isFile
	}
	if len(k.gs.trees) >= maxRepoDirs {
		k.reposChanged()
	}
	k.gs.trees[dir] = trees
	return trees
}

// reposChanged forgets what the guard knew of the repositories around
// directories: a .git was made or moved, or a directory moved.
func (k *call) reposChanged() {
	clear(k.gs.trees)
	clear(k.gs.gitFiles)
	clear(k.gs.hooks)
}

// holdsGit reports whether dir holds a .git of any kind, and whether
// that is a regular file (a .git file naming the git directory).
func (k *call) holdsGit(dir string) (held, isFile bool) {
	root, e := k.rootFD()
	if e != 0 {
		return false, false
	}
	d, err := openat2(root, dir, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return false, false
	}
	defer unix.Close(d)
	var st unix.Stat_t
	if unix.Fstatat(d, ".git", &st, unix.AT_SYMLINK_NOFOLLOW) != nil {
		return false, false
	}
	// A symlink is read at each call as a file is: where it leads, and
	// that directory's commondir, may change.
	kind := st.Mode & unix.S_IFMT
	return true, kind == unix.S_IFREG || kind == unix.S_IFLNK
}

// hooksOf reads the hooks of the repository whose work tree is tree. A
// .git file's repository is read each time (the command may write the
// file after making it); any other's once, until a .git or anything else
// is moved, or a .git made (reposChanged).
func (k *call) hooksOf(tree string) *repoHooks {
	var gitFile []byte
	var isFile error = unix.ENOENT
	key := tree
	cache := true
	if k.gs.gitFiles[tree] {
		// What the file names, where that leads (a symlink on its way
		// may be made), and that git directory's commondir may change
		// at any call: all are read each time.
		gitFile, isFile = k.readInRoot(tree+"/.git", 4096)
		key = tree + "\x00" + string(gitFile)
		dir, ok := gitFileTarget(tree, gitFile)
		if isFile != nil {
			dir, ok = tree+"/.git", true // a symlink (to a directory)
		}
		if ok {
			dir, ok = k.resolved(dir)
		}
		if !ok {
			cache = false // it leads nowhere yet: read again at the next call
		} else {
			common, _ := k.readInRoot(dir+"/commondir", 4096)
			key += "\x00" + dir + "\x00" + string(common)
		}
	}
	if h, ok := k.gs.hooks[key]; ok {
		return h
	}
	h := k.keptHooks(tree, k.readHooks(tree, gitFile, isFile == nil))
	if !cache {
		return h
	}
	if len(k.gs.hooks) >= maxRepoDirs || isFile == nil && len(k.gs.hooks) >= maxRepoDirs/2 {
		clear(k.gs.hooks)
	}
	k.gs.hooks[key] = h
	return h
}

// readHooks reads the hooks of the repository at tree: its git
// directory (tree/.git, or what the .git file names), its common
// directory, the core.hooksPath values of its configs (and what they
// include) or else the common directory's hooks, and the symlinks among
// them.
func (k *call) readHooks(tree string, gitFile []byte, isFile bool) *repoHooks {
	gitDir := tree + "/.git"
	if isFile {
		named, ok := gitFileTarget(tree, gitFile)
		if !ok {
			return nil
		}
		gitDir = named
	}
	gitDir, ok := k.resolved(gitDir)
	if !ok {
		return nil
	}
	return k.gitDirHooks(tree, gitDir)
}

// gitDirHooks reads the hooks of the repository whose git directory is
// gitDir (resolved) and whose work tree is tree (for a bare repository,
// gitDir itself: git takes a relative core.hooksPath from the
// directory it runs in, there).
func (k *call) gitDirHooks(tree, gitDir string) *repoHooks {
	common := gitDir
	if c, err := k.readInRoot(gitDir+"/commondir", 4096); err == nil {
		// As git reads it: trailing line ends dropped, a relative path
		// beneath the git directory, resolved as the kernel does.
		named, _, _ := strings.Cut(strings.TrimRight(string(c), "\r\n"), "\x00")
		if !strings.HasPrefix(named, "/") {
			named = gitDir + "/" + named
		}
		if real, ok := k.resolved(named); ok {
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
		values = append(values, k.configHooksPaths(cfg, &included)...)
	}
	if k.pol.Guard != nil && k.pol.Guard.Policy != nil {
		values = append(values, k.pol.Guard.Policy.TreeHooksPaths...)
	}
	// A file its config includes is read as its config: kept as one
	// (the command could give it core.fsmonitor).
	h := &repoHooks{}
	h.keep("a file its config includes, read as its config", included...)
	if len(values) > 0 {
		for _, v := range values {
			v, ok := k.homeRelative(v)
			if !ok {
				continue
			}
			if !strings.HasPrefix(v, "/") {
				if c := path.Clean(v); c != "." && c != ".." && !strings.HasPrefix(c, "../") && !strings.Contains(v, "..") {
					h.names = append(h.names, strings.Split(c, "/"))
				}
				v = tree + "/" + v // resolved as the kernel does (spellings)
			}
			for _, d := range k.spellings(v) {
				hooksDirs = append(hooksDirs, d)
				if policy.Under(tree, d) {
					// The work tree itself, or above it: only the
					// hooks' own names there are git's to run.
					for _, n := range pathguard.GitHookNames {
						h.keep("a hook, where core.hooksPath names the work tree or above", path.Join(d, n))
					}
					continue
				}
				h.dirs = append(h.dirs, d)
				if path.Base(d) == pathguard.HuskyHooks {
					// husky's hooks there run the same-named scripts
					// one directory up: kept whether or not husky has
					// made them yet (or the command removed them, which
					// unlink lets it, for husky to make again).
					for _, n := range pathguard.GitHookNames {
						h.keep("a script husky's hook of that name runs", path.Join(path.Dir(d), n))
					}
				}
			}
		}
	}
	for _, d := range hooksDirs {
		fd, err := k.dirInRoot(d)
		if err != nil {
			continue
		}
		names, _ := treeRepos.Names(pathguard.Dir(fd), ".")
		for _, n := range names {
			target, err := readlinkat(fd, n)
			if err != nil {
				continue // not a symlink
			}
			if !strings.HasPrefix(target, "/") {
				target = d + "/" + target
			}
			h.keep("a hook's script, which "+path.Join(d, n)+" is a symlink to", k.spellings(target)...)
		}
		unix.Close(fd)
	}
	return h
}

// gitFileTarget reads a .git file at tree as git's read_gitfile_gently
// does: "gitdir: " and the path, trailing line ends dropped (spaces
// kept, and nothing from a NUL on), a relative one beneath tree as spelled (the kernel resolves it,
// symlinks before ".."); ok is false for what git would refuse.
func gitFileTarget(tree string, content []byte) (string, bool) {
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

// configHooksPaths is pathguard.ConfigHooksPaths in the command's root: an
// include is kept at each of its spellings.
func (k *call) configHooksPaths(name string, included *[]string) []string {
	return pathguard.ConfigHooksPaths(name, k.readInRoot, func(inc, from string) (string, []string, bool) {
		inc, ok := k.homeRelative(inc)
		if !ok {
			return "", nil, false
		}
		if !strings.HasPrefix(inc, "/") {
			inc = path.Dir(from) + "/" + inc
		}
		return inc, k.spellings(inc), true
	}, included)
}

// spellings are the paths at which what p names is kept: p as it is
// spelled, read lexically (a symlink on its way may be replaced by a
// directory, which the guard does not see: unlink is not judged), and
// where it leads now, resolved as the kernel does (symlinks before
// "..").
func (k *call) spellings(p string) []string {
	lex := path.Clean(p)
	if real := k.resolvedExisting(p); real != lex {
		return []string{lex, real}
	}
	return []string{lex}
}

// resolvedExisting is where p leads in the command's root, resolved as
// the kernel does: its longest existing part, the rest as spelled.
func (k *call) resolvedExisting(p string) string {
	if real, ok := k.resolved(p); ok {
		return real
	}
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return path.Clean("/" + p)
	}
	d := k.resolvedExisting(p[:i])
	switch base := p[i+1:]; base {
	case "", ".":
		return d
	case "..":
		return path.Dir(d)
	default:
		return path.Join(d, base)
	}
}

// readInRoot reads the regular file p, resolved in the command's root
// (symlinks followed), at most limit bytes.
func (k *call) readInRoot(p string, limit int) ([]byte, error) {
	root, e := k.rootFD()
	if e != 0 {
		return nil, e
	}
	fd, err := openat2(root, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return nil, unix.EINVAL
	}
	// Opened for reading only once known to be a regular file.
	rd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(fd), unix.O_RDONLY|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(rd), p)
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)))
}

// dirInRoot opens the directory p (O_PATH), resolved in the command's
// root.
func (k *call) dirInRoot(p string) (int, error) {
	root, e := k.rootFD()
	if e != 0 {
		return -1, e
	}
	return openat2(root, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
}

// homeRelative reads a path git expands ("~/…" is the home directory's);
// ok is false for what the guard does not follow (another user's
// "~user", no home, nothing).
func (k *call) homeRelative(v string) (string, bool) {
	home := ""
	if k.pol.Guard != nil && k.pol.Guard.Policy != nil {
		home = k.pol.Guard.Policy.Home
	}
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
