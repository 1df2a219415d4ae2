package nsexec

import (
	"io"
	"maps"
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

// keptHooks is what the guard keeps of tree's hooks: what reading its
// repository found now (h, nil for none) and everything it found there
// before in this run. What a repository keeps stays kept when its
// config changes, or its .git goes: the command could unset
// core.hooksPath (a config change the guard lets through, as it takes
// keys away), write the hooks of that directory, and leave them for
// the host's next git config core.hooksPath (a project's setup script,
// husky's install) to run.
func (k *call) keptHooks(tree string, h *pathguard.Hooks) *pathguard.Hooks {
	kept := k.gs.kept[tree]
	if h == nil || h.Empty() {
		return kept
	}
	if kept == nil {
		if len(k.gs.kept) >= maxKeptTrees {
			return h // past the bound, a tree keeps only what it has now
		}
		kept = &pathguard.Hooks{}
		k.gs.kept[tree] = kept
	}
	kept.Merge(h)
	for _, list := range [][]string{h.Dirs, h.Targets} {
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
		if !k.gs.gitFiles[tree] {
			k.walkRemotes(tree + "/.git")
		}
	}
	for _, dir := range k.pol.Guard.Policy.BareRepos {
		if real, ok := k.resolved(dir); ok {
			k.keptHooks(real, k.hookReader().GitDir(real, real))
			k.walkRemotes(real)
		}
	}
}

// maxKeptTrees bounds the work trees whose hooks are kept for the run.
const maxKeptTrees = 1 << 12

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
		if kept, why, ok := h.Holds(tree, full); ok {
			return policy.LaterRule{Path: kept, Why: why}, true
		}
	}
	return policy.LaterRule{}, false
}

// hooksFirstNames are the first names of the relative core.hooksPath
// values of the work trees around dst: a directory moved to dst holding
// an entry by one would bring such a hooks directory into a work tree
// unseen (dst ending with the start of one is hooksBeneath's).
func (k *call) hooksFirstNames(dst string) map[string]bool {
	var first map[string]bool
	for _, tree := range k.hookTrees(path.Dir(dst)) {
		if h := k.hooksOf(tree); h != nil && len(h.Names) > 0 {
			if first == nil {
				first = map[string]bool{}
			}
			maps.Copy(first, h.FirstNames())
		}
	}
	return first
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
		if h.Beneath(tree, full) {
			return true
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
		if policy.Under(tree, full) && !h.Empty() {
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
	return k.hooksOf(tree).Placed()
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
func (k *call) hooksOf(tree string) *pathguard.Hooks {
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
		dir, ok := pathguard.GitFileTarget(tree, gitFile)
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
	h := k.keptHooks(tree, k.hookReader().Tree(tree, gitFile, isFile == nil))
	if !cache {
		return h
	}
	if len(k.gs.hooks) >= maxRepoDirs || isFile == nil && len(k.gs.hooks) >= maxRepoDirs/2 {
		clear(k.gs.hooks)
	}
	k.gs.hooks[key] = h
	return h
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

// hookReader reads repositories' hooks in the command's root.
func (k *call) hookReader() pathguard.HookReader {
	hr := pathguard.HookReader{Root: rootTree{k}}
	if k.pol.Guard != nil && k.pol.Guard.Policy != nil {
		hr.Home, hr.Extra = k.pol.Guard.Policy.Home, k.pol.Guard.Policy.TreeHooksPaths
	}
	return hr
}

// rootTree is the command's root as pathguard.Root.
type rootTree struct{ k *call }

func (r rootTree) ReadFile(p string, limit int) ([]byte, error) { return r.k.readInRoot(p, limit) }
func (r rootTree) Resolve(p string) (string, bool)              { return r.k.resolved(p) }
func (r rootTree) Links(p string) map[string]string {
	fd, err := r.k.dirInRoot(p)
	if err != nil {
		return nil
	}
	defer unix.Close(fd)
	names, _ := treeRepos.Names(pathguard.Dir(fd), ".")
	links := map[string]string{}
	for _, n := range names {
		if target, err := readlinkat(fd, n); err == nil {
			links[n] = target
		}
	}
	return links
}
