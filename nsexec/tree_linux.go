package nsexec

import (
	"errors"
	"fmt"
	"io/fs"

	"github.com/srt-go/srt/pathguard"

	"golang.org/x/sys/unix"
)

// unixTree is pathguard.Tree on the kernel: names relative to srt's
// descriptors, resolved as the guard resolves them (in the command's
// root, through the directory the call reached).
type unixTree struct{}

// treeErr is err as pathguard.Tree says it.
func treeErr(err error) error {
	if err == unix.ENOTDIR {
		return fmt.Errorf("%w", pathguard.ErrNotDir)
	}
	return err
}

func (unixTree) Lstat(dir pathguard.Dir, rel string) (fs.FileMode, error) {
	var st unix.Stat_t
	if err := unix.Fstatat(int(dir), rel, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return 0, treeErr(err)
	}
	return modeType(st.Mode), nil
}

func (unixTree) OpenDir(dir pathguard.Dir, rel string, follow bool) (pathguard.Dir, error) {
	flags := unix.O_RDONLY | unix.O_DIRECTORY | unix.O_CLOEXEC
	if !follow {
		flags |= unix.O_NOFOLLOW
	}
	fd, err := unix.Openat(int(dir), rel, flags, 0)
	if err == unix.ELOOP && !follow {
		err = unix.ENOTDIR // a symlink at the end, not followed: no directory there
	}
	if err != nil {
		return -1, treeErr(err)
	}
	return pathguard.Dir(fd), nil
}

func (unixTree) ReadDir(dir pathguard.Dir) ([]fs.DirEntry, error) {
	buf := direntBufs.Get().(*[32 << 10]byte)
	defer direntBufs.Put(buf)
	var out []fs.DirEntry
	for {
		n, err := unix.Getdents(int(dir), buf[:])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return out, err
		}
		if n <= 0 {
			return out, nil
		}
		parseDirents(buf[:n], func(name []byte, typ uint8) {
			if typ == unix.DT_UNKNOWN {
				var st unix.Stat_t
				if unix.Fstatat(int(dir), string(name), &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
					typ = direntType(st.Mode)
				}
			}
			out = append(out, treeEntry{name: string(name), typ: modeType(uint32(typ) << 12)})
		})
	}
}

func (unixTree) ReadFile(dir pathguard.Dir, rel string, limit int) ([]byte, error) {
	b, err := readAt(int(dir), rel, limit)
	return b, treeErr(err)
}

// Foreign: another user's directory the guard, acting as the command,
// can neither read nor write (a database's volume).
func (unixTree) Readlink(dir pathguard.Dir, name string) (string, error) {
	target, err := readlinkat(int(dir), name)
	return target, treeErr(err)
}

func (unixTree) Foreign(dir pathguard.Dir, name string) bool {
	var st unix.Stat_t
	own := unix.Fstatat(int(dir), name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || st.Uid == uint32(unix.Geteuid())
	return !own && unix.Faccessat(int(dir), name, unix.W_OK, unix.AT_EACCESS) != nil
}

func (unixTree) Close(dir pathguard.Dir) { unix.Close(int(dir)) }

// modeType is the fs type bits of a stat mode.
func modeType(mode uint32) fs.FileMode {
	switch mode & unix.S_IFMT {
	case unix.S_IFDIR:
		return fs.ModeDir
	case unix.S_IFLNK:
		return fs.ModeSymlink
	case unix.S_IFIFO:
		return fs.ModeNamedPipe
	case unix.S_IFSOCK:
		return fs.ModeSocket
	case unix.S_IFCHR:
		return fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFBLK:
		return fs.ModeDevice
	case unix.S_IFREG:
		return 0
	}
	return fs.ModeIrregular
}

// treeEntry is a directory entry unixTree read.
type treeEntry struct {
	name string
	typ  fs.FileMode
}

func (e treeEntry) Name() string               { return e.name }
func (e treeEntry) IsDir() bool                { return e.typ.IsDir() }
func (e treeEntry) Type() fs.FileMode          { return e.typ }
func (e treeEntry) Info() (fs.FileInfo, error) { return nil, errors.ErrUnsupported }

// treeRepos reads repositories with no settings of a call's (allowGitConfig,
// a worktree's link back).
var treeRepos = pathguard.Repos{Tree: unixTree{}}

// repos is the path guard's judge of a repository's names for this call.
func (k *call) repos() pathguard.Repos {
	return pathguard.Repos{Tree: unixTree{}, GitConfig: k.pol.Guard.GitConfig, WorktreeLink: k.worktreeLink}
}

// worktreeLink judges a worktree's link back about to land (worktreeSafe).
func (k *call) worktreeLink(content []byte) error {
	root, e := k.rootFD()
	if e != 0 {
		return e
	}
	return worktreeSafe(k.pol, root, content)
}

// at is pl as pathguard names it.
func (pl place) at() pathguard.At {
	return pathguard.At{Dir: pathguard.Dir(pl.dir), Path: pl.path, Name: pl.name, Full: pl.full()}
}

// decider is the path guard's decisions for this call
// (pathguard.Decider), with what the backend knows: the deny entries
// that apply later and the repositories' hooks it keeps, and in the
// fallback what its plan lets be written.
func (k *call) decider() pathguard.Decider {
	return pathguard.Decider{Rules: k.pol.Guard.Rules(), Repos: k.repos(), Writable: k.writable, TargetsBeneath: k.gitOverTarget, TargetAbove: k.targetAbove, LeadsAway: k.leadsAway,
		KeepsHooks: k.keepsHooks, Carried: k.carried, TreeWritable: k.pol.writableTree,
		Resolve: func(p string) (pathguard.Dir, string, error) {
			root, e := k.rootFD()
			if e != 0 {
				return -1, "", e
			}
			return k.pol.rootDecider(root).Resolve(p)
		},
		Made: func(a pathguard.At, anchor string) bool {
			return k.madeInRun(place{dir: int(a.Dir), path: a.Path}, anchor)
		},
		Later: func(full string) (string, bool) {
			r, ok := k.later(full)
			if !ok {
				return "", false
			}
			return laterReason(r), true
		}}
}

// refuse says a refused call's verdict for the name at pl: what the
// kernel would say first (EEXIST where the name is, EROFS on a read-only
// mount), else the verdict's errno, reported.
func (k *call) refuse(op string, pl place, v pathguard.Verdict) unix.Errno {
	var st unix.Stat_t
	if v.ExistsFirst && unix.Fstatat(pl.dir, pl.name, &st, unix.AT_SYMLINK_NOFOLLOW) == nil {
		return unix.EEXIST
	}
	if v.KernelFirst && pl.isReadOnly() {
		return unix.EROFS
	}
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: pl.full(), Reason: v.Reason})
}
