package nsexec

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"strconv"
	"strings"

	"github.com/srt-go/srt/pathguard"
	"github.com/srt-go/srt/policy"
	"golang.org/x/sys/unix"
)

// The path guard: a repository's names — what makes a directory a git
// directory, its hooks, its config and git's state files judged by
// content and put in place by the guard, and the repositories a config's
// URL may name.

// sealForMark runs before a call makes the name at pl: when that name is
// a mark that makes its directory a git directory, the directory's config
// files are first replaced by copies the guard makes of what they hold
// now (judged safe by judge, through unsafeToMark), so that no descriptor
// or second name the command kept from before can change them after.
func (k *call) sealForMark(pl place) unix.Errno {
	if !pathguard.IsGitMark(pl.name) || pl.dir < 0 || k.repos().GitDirLike(pathguard.Dir(pl.dir), ".") {
		return 0
	}
	for _, name := range k.repos().JudgedFiles(pathguard.Dir(pl.dir)) {
		if e := k.sealConfig(pl.dir, name, path.Join(pl.path, name)); e != 0 {
			return k.pol.deny(e, Event{Kind: "filesystem", Call: "write", Target: path.Join(pl.path, pl.name),
				Reason: "its directory's " + name + " could not be sealed before it became a git directory"})
		}
	}
	return 0
}

// worktreeSafe judges a worktree's link back about to land (gitdirSafe),
// reached through no symlink, and keeps the worktree's directory
// (keepTarget): no symlink may be put at it or above it after, nor
// anything moved there. The host's git worktree repair writes a .git
// file where the link back leads, and git worktree remove --force
// deletes the directory there, through any symlink on the way.
func worktreeSafe(pol *ConnectPolicy, root int, content []byte) error {
	if err := gitdirSafe(pol, content); err != nil {
		return err
	}
	p, _ := pathguard.WorktreeGitdirPath(content)
	if err := noSymlinkOnWay(root, path.Dir(p)); err != nil {
		return err
	}
	pol.keepTarget(root, path.Dir(p))
	return nil
}

// gitdirSafe judges a worktree's link back (worktrees/<id>/gitdir): it
// must name a .git in a tree the command may write, as git writes it.
func gitdirSafe(pol *ConnectPolicy, content []byte) error {
	p, ok := pathguard.WorktreeGitdirPath(content)
	if !ok {
		return fmt.Errorf("not the absolute path of a worktree's .git, as git writes it")
	}
	if !pol.writableTree(path.Dir(p)) {
		return fmt.Errorf("%s lies outside the trees the command may write, where the host's git worktree repair would write a .git file and git worktree remove delete the directory", p)
	}
	return nil
}

// readAt reads dir/name, not through a symlink nor waiting on a FIFO:
// at most limit bytes and one more, so that a longer file is seen so.
func readAt(dir int, name string, limit int) ([]byte, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(fd), name)
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, int64(limit)+1))
}

// sealConfig replaces dir/name, if it is there, by a copy of its content.
func (k *call) sealConfig(dir int, name, full string) unix.Errno {
	in, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_CLOEXEC, 0)
	if err == unix.ENOENT {
		return 0
	}
	if err != nil {
		return unix.EACCES
	}
	f := os.NewFile(uintptr(in), name)
	defer f.Close()
	if _, denied := k.pol.Guard.Later(full); denied || readOnlyFD(in) || mountPoint(place{dir: dir, name: name}) || !k.writable(full) {
		// A file the command may not write (a mount of the launch keeps
		// it read-only, a deny entry or the fallback's plan covers it):
		// it holds nothing of the command's, and srt, outside the
		// sandbox's mount namespace, would replace it underneath that
		// mount.
		return 0
	}
	var st unix.Stat_t
	if err := unix.Fstat(in, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return unix.EACCES
	}
	content, err := io.ReadAll(io.LimitReader(f, pathguard.MaxGitFile+1))
	if err != nil || k.repos().FileSafe(pathguard.Dir(dir), name, content) != nil {
		return unix.EACCES
	}
	if d := path.Dir(name); d != "." {
		// A state file (rebase-merge/git-rebase-todo): the copy is made in its own
		// directory.
		sub, err := unix.Openat(dir, d, unix.O_PATH|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return unix.EACCES
		}
		defer unix.Close(sub)
		return k.putCopy(sub, path.Base(name), content, st.Mode)
	}
	return k.putCopy(dir, name, content, st.Mode)
}

// putCopy gives dir/name a new inode holding content (mode), made by the
// guard: whatever reached the old one no longer reaches the name.
func (k *call) putCopy(dir int, name string, content []byte, mode uint32) unix.Errno {
	var tmp int
	if e := k.creating(func() (err error) {
		tmp, err = unix.Openat(dir, ".", unix.O_WRONLY|oTmpfile|unix.O_DIRECTORY|unix.O_CLOEXEC, mode&0o777)
		return err
	}); e != 0 {
		return e
	}
	out := os.NewFile(uintptr(tmp), name)
	defer out.Close()
	if _, err := out.Write(content); err != nil {
		return errnoOf(err)
	}
	if err := unix.Fchmod(tmp, mode&0o7777); err != nil {
		return errnoOf(err)
	}
	if err := unix.Unlinkat(dir, name, 0); err != nil && err != unix.ENOENT {
		return errnoOf(err)
	}
	return errnoOf(unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(tmp), dir, name, unix.AT_SYMLINK_FOLLOW))
}

// keepTarget records where a .git file or a commondir the guard let
// land leads: p as spelled, read lexically, and where it leads now. No
// symlink, nor anything moved, may be put there or on its way after
// (targetAbove): what the file names would change without a write the
// guard judges. Called under pol.calls.
func (pol *ConnectPolicy) keepTarget(root int, p string) {
	if len(pol.targets) >= maxKeptTargets {
		return
	}
	pol.targets = append(pol.targets, path.Clean(p))
	if fd, err := openat2(root, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS}); err == nil {
		if real, ok := openedAt(fd); ok {
			pol.targets = append(pol.targets, real)
		}
		unix.Close(fd)
	}
}

// targetAbove reports whether full lies at or above where a .git file or
// a commondir the guard let land leads (keepTarget).
func (k *call) targetAbove(full string) bool {
	for _, t := range k.pol.targets {
		if policy.Under(t, full) {
			return true
		}
	}
	return false
}

// rootDecider decides what needs only the command's root root: where a
// .git, a .git file or a commondir may lead (Decider.LeadsIn), for a
// deferred write's judging, which has no call of its own.
func (pol *ConnectPolicy) rootDecider(root int) pathguard.Decider {
	return pathguard.Decider{Repos: treeRepos, TreeWritable: pol.writableTree,
		Resolve: func(p string) (pathguard.Dir, string, error) {
			fd, err := openat2(root, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
			if err != nil {
				return -1, "", err
			}
			real, ok := openedAt(fd)
			if !ok {
				real = "" // cannot be told
			}
			return pathguard.Dir(fd), real, nil
		}}
}

// gitOverTarget reports whether a .git made in dir would put where a
// .git file or a commondir leads (pol.targets) in a work tree (see
// leadsInRoot).
func (k *call) gitOverTarget(dir string) bool {
	for _, t := range k.pol.targets {
		if policy.Under(t, dir) && !policy.Under(t, path.Join(dir, ".git")) {
			return true
		}
	}
	return false
}

// writableTree reports whether p lies in a tree the command may write.
func (pol *ConnectPolicy) writableTree(p string) bool {
	return !(pol.Guard != nil && pol.Guard.Policy != nil && !pol.Guard.Policy.View(p).Writable || pol.Writable != nil && !pol.Writable(p))
}

// gitLinkAt judges a .git or a commondir other than a directory landing
// at pl by a symlink (holding target) or, regular, a file's rename or
// link (Decider.GitLink); where an allowed .git symlink leads is kept
// from then on (keepTarget).
func (k *call) gitLinkAt(op string, pl place, regular bool, target string) unix.Errno {
	if v := k.decider().GitLink(pl.at(), regular, target); v.Refused() {
		return k.refuse(op, pl, v)
	}
	if pl.name == ".git" && !regular {
		root, e := k.rootFD()
		if e != 0 {
			return e
		}
		if !strings.HasPrefix(target, "/") {
			target = pl.path + "/" + target
		}
		if r := k.treeRemotes(pl.dir, pl.path); r != nil {
			// The work tree's repository existed at launch: the git
			// directory the symlink names keeps where it went.
			gd, err := openat2(root, target, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
			if err != nil {
				return errnoOf(err)
			}
			err = k.gs.inheritRemotes(r, gd, target)
			unix.Close(gd)
			if err != nil {
				return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: pl.full(), Reason: "a .git symlink to a git directory whose config " + err.Error()})
			}
		}
		k.pol.keepTarget(root, target)
	}
	return 0
}

// noSymlinkOnWay reports an error if the directory p (absolute), or the
// part of it that exists, is reached in the root through a symlink: the
// host's git would follow it.
func noSymlinkOnWay(root int, p string) error {
	for q := path.Clean(p); ; q = path.Dir(q) {
		fd, err := openat2(root, q, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err == nil {
			unix.Close(fd)
			return nil
		}
		if err == unix.ELOOP {
			return fmt.Errorf("%s is reached through a symlink", q)
		}
		if err != unix.ENOENT || q == "/" {
			return err
		}
	}
}

// localRepo judges a repository on this machine that a config's new URL
// names (pathguard.LocalRepo), by its absolute path as the URL spells it,
// resolved in the caller's root: a push there runs its hooks. The way
// there may pass no symlink the command may re-aim (one in a tree it may
// write). Outside every such tree the repository is the host's own.
// Inside one it must be a repository now (a work tree whose .git is a
// directory, or a bare one), whose hooks the guard keeps from the
// command, and one no other work tree holds: there the host's git,
// checking out a commit of the command's, writes what it holds — a
// repository with hooks, in place of one the command removed, or one
// the launch found, which a checkout before the run may have written.
func (k *call) localRepo(p string) error {
	root, e := k.rootFD()
	if e != 0 {
		return e
	}
	return k.pol.localRepoIn(root, p)
}

// localRepoIn is localRepo in the command's root root.
func (pol *ConnectPolicy) localRepoIn(root int, p string) error {
	real, err := pol.resolveFixed(root, p, 0)
	if err != nil {
		return err
	}
	if !pol.writableTree(real) {
		return nil
	}
	fd, err := openat2(root, real, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return fmt.Errorf("no repository there (%v)", err)
	}
	defer unix.Close(fd)
	is := func(name string, kind uint32) bool {
		var st unix.Stat_t
		return unix.Fstatat(fd, name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil && st.Mode&unix.S_IFMT == kind
	}
	if !(is(".git", unix.S_IFDIR) && is(".git/HEAD", unix.S_IFREG) || is("HEAD", unix.S_IFREG) && is("objects", unix.S_IFDIR) && is("refs", unix.S_IFDIR)) {
		return errors.New("not a repository (a work tree with a .git directory, or a bare one) in a tree the command may write: a push there would run whatever hooks it came to hold")
	}
	if treeRepos.GitUp(pathguard.Dir(fd), "..", strings.Count(real, "/")) {
		return errors.New("a repository inside another's work tree: the host's git, checking out a commit of the command's, could write a repository with hooks in its place")
	}
	return nil
}

// resolveFixed resolves the absolute path p in root as the kernel
// would, one name at a time, refusing a symlink on the way that lies in
// a tree the command may write (it could re-aim it later); past the
// first name that does not exist, the rest is read lexically.
func (pol *ConnectPolicy) resolveFixed(root int, p string, hops int) (string, error) {
	real := "/"
	names := strings.Split(p, "/")
	for i, c := range names {
		switch c {
		case "", ".":
			continue
		case "..":
			real = path.Dir(real) // real holds no symlink: ".." is its parent
			continue
		}
		next := path.Join(real, c)
		var st unix.Stat_t
		if err := unix.Fstatat(root, "."+next, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			// Nothing there yet: where it would be, read lexically (the
			// caller refuses it in a tree the command may write).
			return path.Join(append([]string{next}, names[i+1:]...)...), nil
		}
		if st.Mode&unix.S_IFMT != unix.S_IFLNK {
			real = next
			continue
		}
		if pol.writableTree(next) {
			return "", fmt.Errorf("%s, on the way, is a symlink the command may re-aim", next)
		}
		if hops >= maxSymlinks {
			return "", unix.ELOOP
		}
		target, err := readlinkat(root, "."+next)
		if err != nil {
			return "", err
		}
		if !strings.HasPrefix(target, "/") {
			target = real + "/" + target
		}
		if real, err = pol.resolveFixed(root, target, hops+1); err != nil {
			return "", err
		}
	}
	return real, nil
}

// replaceConfig puts a repository's config in place from the file at
// src (git's config.lock): the content is read once, judged, and written
// by the guard to a file of its own, which replaces src's name and then
// the config; the command's own file is unlinked, so no descriptor it
// still holds can change what was judged.
func (k *call) replaceConfig(src, dst place) unix.Errno {
	full := dst.full()
	in, err := unix.Openat(src.dir, src.name, unix.O_RDONLY|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return errnoOf(err)
	}
	f := os.NewFile(uintptr(in), "config")
	defer f.Close()
	var st unix.Stat_t
	if err := unix.Fstat(in, &st); err != nil || st.Mode&unix.S_IFMT != unix.S_IFREG {
		return unix.EACCES
	}
	content, err := io.ReadAll(io.LimitReader(f, pathguard.MaxGitFile+1))
	if err != nil {
		return errnoOf(err)
	}
	if pathguard.IsConfigName(dst.name) {
		// A config: what the one it replaces holds off the list (the
		// host's core.hooksPath, a credential helper) may stay as it is.
		old, _ := readAt(dst.dir, dst.name, maxGitConfig)
		launch := k.launchRemotes(dst.dir, dst.path)
		err = pathguard.GitConfigSafeBeside(content, old, k.localRepo)
		if err == nil && launch != nil {
			err = launch.Kept(content)
		}
	} else {
		err = k.repos().FileSafe(pathguard.Dir(dst.dir), dst.name, content)
	}
	if err == nil && dst.name == "config" {
		err = k.repos().IndexesStaySafe(pathguard.Dir(dst.dir), content)
	}
	if err != nil {
		return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "rename", Target: full, Reason: pathguard.FileIs(dst.name) + " may hold nothing that runs a program: " + err.Error()})
	}
	// The command's file under src's name becomes the guard's copy, which
	// then takes the config's name; never writable by its group or
	// others (see mayChange).
	if e := k.putCopy(src.dir, src.name, content, st.Mode&^0o022); e != 0 {
		return e
	}
	return errnoOf(unix.Renameat(src.dir, src.name, dst.dir, dst.name))
}
