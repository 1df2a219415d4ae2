package nsexec

import (
	"bufio"
	"bytes"
	"os"
	"path"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-go/srt/pathguard"
)

// Where the host's git sends a repository that existed at launch
// (pathguard.Remotes): read the first time a call of the command's could
// change it — a config replaced, written, removed, or its .git moved or
// removed — before the call is made, so it is what the launch had (every
// earlier change was such a call). Kept by the identity of the work
// tree, which neither a rename nor a new .git changes.

// maxBranches bounds the branches read of one repository.
const maxBranches = 1 << 12

// launchRemotes returns where the repository whose git directory is at
// gd (path p) sent it when the command started; nil when it was made in
// the run, or has no config the guard can read.
func (k *call) launchRemotes(gd int, p string) *pathguard.Remotes {
	key, anchor, ok := repoKey(gd, p)
	if !ok {
		return nil
	}
	if r, seen := lookupRemotes(k.gs, k.gs.remotes, key); seen {
		return r
	}
	k.readWalkRepos() // the launch's repositories, by path, first
	var r *pathguard.Remotes
	if at, _ := lookupRemotes(k.gs, k.gs.remotesAt, anchor); at != nil {
		// A repository at the path of one the launch's walk found (it,
		// or one made again there: moved away and copied back, cloned
		// over): where that one went.
		r = at
	} else if !k.gs.made.IsMade(key) {
		// A directory of the launch (not one made at a launch
		// directory's path, which may hold anything): its config now is
		// the launch's, every change being such a call. Kept by path
		// too, for one made again there.
		if content, err := readAt(gd, "config", maxGitConfig); err == nil {
			if rem, err := pathguard.ReadRemotes(content); err == nil {
				rem.Branches = branchesAt(gd)
				r = &rem
				keepRemotes(k.gs, k.gs.remotesAt, anchor, r, false)
			}
		}
	}
	keepRemotes(k.gs, k.gs.remotes, key, r, false)
	return r
}

// lookupRemotes is what the guard kept of a repository, by its identity
// (gs.remotes) or its path (gs.remotesAt).
func lookupRemotes[K comparable](gs *guardState, m map[K]*pathguard.Remotes, key K) (*pathguard.Remotes, bool) {
	gs.remotesMu.Lock()
	defer gs.remotesMu.Unlock()
	r, ok := m[key]
	return r, ok
}

// keepRemotes keeps r for a repository, by its identity or its path: the
// first kept stays (it is the launch's), unless replace (a git directory
// a .git of the launch's work tree now names takes the tree's).
func keepRemotes[K comparable](gs *guardState, m map[K]*pathguard.Remotes, key K, r *pathguard.Remotes, replace bool) {
	gs.remotesMu.Lock()
	defer gs.remotesMu.Unlock()
	if _, ok := m[key]; (replace || !ok) && len(m) < maxKeptTrees {
		m[key] = r
	}
}

// walkRemotes reads, with the launch's repositories' hooks, where the
// one whose git directory is gitDir went (kept by its path too), before
// the first call that could change it.
func (k *call) walkRemotes(gitDir string) {
	if fd, err := k.dirInRoot(gitDir); err == nil {
		k.launchRemotes(fd, gitDir)
		unix.Close(fd)
	}
}

// treeRemotes is what the guard kept of the repository whose work tree
// is the directory tree, where a .git is about to land: read from its
// .git directory if it still has one and nothing was kept yet.
func (k *call) treeRemotes(tree int, treePath string) *pathguard.Remotes {
	id, ok := identityAt(tree, "")
	if !ok {
		return nil
	}
	if r, seen := lookupRemotes(k.gs, k.gs.remotes, id); seen {
		return r
	}
	if fd, err := unix.Openat(tree, ".git", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
		defer unix.Close(fd)
		return k.launchRemotes(fd, treePath+"/.git")
	}
	return nil
}

// inheritRemotes has the git directory at gd (path p), which a .git
// file or symlink landing in a work tree of the launch now names, keep
// where that tree's repository went at launch (r): the host's git there
// takes the new git directory's config. It says why not, if that config
// already sends it elsewhere.
func (gs *guardState) inheritRemotes(r *pathguard.Remotes, gd int, p string) error {
	if r == nil {
		return nil
	}
	if content, err := readAt(gd, "config", maxGitConfig); err == nil {
		if err := r.Kept(content); err != nil {
			return err
		}
	}
	if key, _, ok := repoKey(gd, p); ok {
		keepRemotes(gs, gs.remotes, key, r, true) // the tree's, whatever was kept of it before
	}
	return nil
}

// repoKey is the identity a repository's launch remotes are kept by,
// for its git directory at gd (path p), and that directory's path: the
// work tree's for a .git, else the git directory's own.
func repoKey(gd int, p string) (pathguard.ID, string, bool) {
	if path.Base(p) == ".git" {
		id, ok := identityAt(gd, "..")
		return id, path.Dir(p), ok
	}
	id, ok := identityAt(gd, "")
	return id, p, ok
}

// branchesAt lists the branches of the git directory at gd: its
// refs/heads, and packed-refs' (a worktree's refs are its common
// directory's, which the command cannot tell apart from here: a branch
// it does not find counts as new).
func branchesAt(gd int) map[string]bool {
	out := map[string]bool{}
	var walk func(dir int, prefix string)
	walk = func(dir int, prefix string) {
		f := os.NewFile(uintptr(dir), prefix)
		defer f.Close()
		entries, _ := f.ReadDir(-1)
		for _, e := range entries {
			if len(out) >= maxBranches {
				return
			}
			name := prefix + e.Name()
			if !e.IsDir() {
				out[name] = true
				continue
			}
			if sub, err := unix.Openat(dir, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
				walk(sub, name+"/")
			}
		}
	}
	if heads, err := unix.Openat(gd, "refs/heads", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
		walk(heads, "")
	}
	if packed, err := readAt(gd, "packed-refs", 1<<22); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(packed))
		for sc.Scan() && len(out) < maxBranches {
			if _, ref, ok := strings.Cut(sc.Text(), " "); ok {
				if b, ok := strings.CutPrefix(ref, "refs/heads/"); ok {
					out[b] = true
				}
			}
		}
	}
	return out
}

// noteRemotes reads, before a call removes or moves the name at pl, where
// its repository went at launch, if pl is a git directory's config or a
// .git directory: once the name is gone, what it held cannot be read.
func (k *call) noteRemotes(pl place) {
	switch {
	case pathguard.IsConfigName(pl.name) && pl.dir >= 0 && (path.Base(pl.path) == ".git" || k.repos().GitDirLike(pathguard.Dir(pl.dir), ".")):
		k.launchRemotes(pl.dir, pl.path)
	case pl.name == ".git" && pl.dir >= 0:
		if fd, err := unix.Openat(pl.dir, ".git", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
			k.launchRemotes(fd, pl.full())
			unix.Close(fd)
		}
	}
}

// noteTreesMoved reads, before the directory at pl (one of the launch's)
// is moved away, where each repository in it went — a work tree at or
// beneath it, to MaxMovedTree entries — and keeps it by its path too:
// a repository made again there (copied back, cloned) keeps it.
func (k *call) noteTreesMoved(pl place) {
	if pl.dir < 0 || k.madeInRun(pl, pl.full()) {
		return
	}
	d, err := unix.Openat(pl.dir, pl.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return
	}
	seen := 0
	var walk func(dir int, at string)
	walk = func(dir int, at string) {
		f := os.NewFile(uintptr(dir), at)
		defer f.Close()
		entries, _ := f.ReadDir(-1)
		for _, e := range entries {
			if seen++; seen > pathguard.MaxMovedTree || !e.IsDir() {
				continue
			}
			if e.Name() == ".git" {
				if gd, err := unix.Openat(dir, ".git", unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
					k.launchRemotes(gd, at+"/.git") // kept by its path too
					unix.Close(gd)
				}
				continue // a git directory holds no work tree
			}
			if sub, err := unix.Openat(dir, e.Name(), unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
				walk(sub, at+"/"+e.Name())
			}
		}
	}
	walk(d, pl.full())
}
