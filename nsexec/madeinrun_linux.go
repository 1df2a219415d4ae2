package nsexec

import (
	"strings"

	"github.com/srt-go/srt/pathguard"
	"github.com/srt-go/srt/policy"

	"golang.org/x/sys/unix"
)

// The trees the command made in this run. A shell's startup files and an
// agent's or IDE's configuration are protected where the host would run
// them: in the directories that existed when the command started (home,
// the user's projects). In a tree the command made during the run — a
// clone, an unpacked tarball, a copy — they are that project's content
// (policy.Guard.JudgeWhere). The guard makes every directory the command
// makes, so it knows them by identity: a directory keeps it when renamed,
// and another directory cannot take it. A path where a directory of the
// launch was removed or moved away is never taken for the command's, even
// once a directory it made lies there: what the host would run from the
// old one must not come back there.

// dirIdentity names a directory for as long as it exists, and after: its
// inode with its birth time, where the filesystem keeps one (an inode
// number is used again).
type dirIdentity struct {
	dev, ino uint64
	born     unix.StatxTimestamp
}

// maxMadeDirs bounds the directories the guard remembers per sandbox;
// past it, the command's new ones are taken for the launch's (their
// project names protected), which fails safe.
const maxMadeDirs = 1 << 20

// identityAt is the identity of dir/name (dir itself with name ""), if it
// is a directory.
func identityAt(dir int, name string) (dirIdentity, bool) {
	flags := unix.AT_SYMLINK_NOFOLLOW | unix.AT_NO_AUTOMOUNT
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	var st unix.Statx_t
	if unix.Statx(dir, name, flags, unix.STATX_TYPE|unix.STATX_INO|unix.STATX_BTIME, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return dirIdentity{}, false
	}
	id := dirIdentity{dev: unix.Mkdev(st.Dev_major, st.Dev_minor), ino: st.Ino}
	if st.Mask&unix.STATX_BTIME != 0 {
		id.born = st.Btime
	}
	return id, true
}

// noteMade records that the command made the directory at pl.
func (gs *guardState) noteMade(pl place) {
	if len(gs.made) >= maxMadeDirs {
		return
	}
	if id, ok := identityAt(pl.dir, pl.name); ok {
		gs.made[id] = true
	}
}

// noteGone is called before the directory at pl is removed, or moved
// away from its path (onto), or has another moved onto it: the
// command's own is forgotten; where one of the launch was, the path is
// remembered.
func (gs *guardState) noteGone(pl place) {
	id, ok := identityAt(pl.dir, pl.name)
	if !ok {
		return
	}
	if gs.made[id] {
		delete(gs.made, id)
		return
	}
	gs.rememberGone(pl.full())
}

// noteMovedAway is called before the directory at pl is renamed: one
// of the launch leaves its path, which is remembered; the command's own
// keeps its identity where it goes.
func (gs *guardState) noteMovedAway(pl place) {
	if id, ok := identityAt(pl.dir, pl.name); ok && !gs.made[id] {
		gs.rememberGone(pl.full())
	}
}

func (gs *guardState) rememberGone(full string) {
	for _, p := range gs.launchGone {
		if policy.Under(full, p) {
			return
		}
	}
	gs.launchGone = append(gs.launchGone, full)
}

// judgeName is the name rules' verdict on full, the path of pl: a
// project's protected name in a tree the command made is free there.
func (k *call) judgeName(pl place, full string) (pathguard.Name, string) {
	return k.pol.Guard.Rules().JudgeMade(full, func(anchor string) bool { return k.madeInRun(pl, anchor) })
}

// madeInRun reports whether the directory at anchor (a physical path in
// the command's root, as policy.Guard.JudgeWhere gives it for pl) was
// made by the command in this run, at a path where none of the launch
// was.
func (k *call) madeInRun(pl place, anchor string) bool {
	gs := k.gs
	if len(gs.made) == 0 {
		return false
	}
	for _, p := range gs.launchGone {
		if policy.Under(anchor, p) {
			return false
		}
	}
	var id dirIdentity
	var ok bool
	switch {
	case anchor == pl.path && pl.dir >= 0:
		id, ok = identityAt(pl.dir, "")
	case strings.HasPrefix(anchor, "/"):
		root, e := k.rootFD()
		if e != 0 {
			return false
		}
		fd, err := openat2(root, anchor, &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS | unix.RESOLVE_NO_MAGICLINKS})
		if err != nil {
			return false
		}
		id, ok = identityAt(fd, "")
		unix.Close(fd)
	}
	return ok && gs.made[id]
}

// madeOntoLaunch refuses (EXDEV, which makes mv copy the tree one judged
// name at a time) moving a directory the command made to where a
// directory of the launch is, or was: the project's names it already
// holds would land where the host runs them. An exchange moves each to
// the other's path.
func (k *call) madeOntoLaunch(src, dst place, flags int) unix.Errno {
	onto := func(from, to place, replaced bool) bool {
		id, ok := identityAt(from.dir, from.name)
		if !ok || !k.gs.made[id] {
			return false // not a directory of the command's
		}
		full := to.full()
		for _, p := range k.gs.launchGone {
			if policy.Under(full, p) {
				return true
			}
		}
		if !replaced {
			return false
		}
		there, ok := identityAt(to.dir, to.name)
		return ok && !k.gs.made[there] // a directory of the launch is there
	}
	exchange := flags&unix.RENAME_EXCHANGE != 0
	if onto(src, dst, true) || exchange && onto(dst, src, true) {
		return unix.EXDEV
	}
	return 0
}
