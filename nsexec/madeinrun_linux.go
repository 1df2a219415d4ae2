package nsexec

import (
	"strings"

	"github.com/srt-go/srt/pathguard"

	"golang.org/x/sys/unix"
)

// The trees the command made in this run (pathguard.MadeTrees): the
// guard makes every directory the command makes, and knows it by its
// identity, which the kernel gives.

// identityAt is the identity of dir/name (dir itself with name ""), if it
// is a directory.
func identityAt(dir int, name string) (pathguard.ID, bool) {
	flags := unix.AT_SYMLINK_NOFOLLOW | unix.AT_NO_AUTOMOUNT
	if name == "" {
		flags |= unix.AT_EMPTY_PATH
	}
	var st unix.Statx_t
	if unix.Statx(dir, name, flags, unix.STATX_TYPE|unix.STATX_INO|unix.STATX_BTIME, &st) != nil || st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return pathguard.ID{}, false
	}
	id := pathguard.ID{Dev: unix.Mkdev(st.Dev_major, st.Dev_minor), Ino: st.Ino}
	if st.Mask&unix.STATX_BTIME != 0 {
		id.Born = [2]int64{st.Btime.Sec, int64(st.Btime.Nsec)}
	}
	return id, true
}

// noteMade records that the command made the directory at pl.
func (gs *guardState) noteMade(pl place) {
	if id, ok := identityAt(pl.dir, pl.name); ok {
		gs.made.Made(id)
	}
}

// noteGone is called before the directory at pl is removed, or has
// another moved onto it.
func (gs *guardState) noteGone(pl place) {
	if id, ok := identityAt(pl.dir, pl.name); ok {
		gs.made.Gone(id, pl.full())
	}
}

// noteMovedAway is called before the directory at pl is renamed.
func (gs *guardState) noteMovedAway(pl place) {
	if id, ok := identityAt(pl.dir, pl.name); ok {
		gs.made.MovedAway(id, pl.full())
	}
}

// judgeName is the name rules' verdict on full, the path of pl: a
// project's protected name in a tree the command made is free there.
func (k *call) judgeName(pl place, full string) (pathguard.Name, string) {
	return k.pol.Guard.Rules().JudgeMade(full, func(anchor string) bool { return k.madeInRun(pl, anchor) })
}

// madeInRun reports whether the directory at anchor (a physical path in
// the command's root, as pathguard.Rules.JudgeWhere gives it for pl) was
// made by the command in this run, at a path where none of the launch
// was.
func (k *call) madeInRun(pl place, anchor string) bool {
	if !k.gs.made.Any() {
		return false
	}
	var id pathguard.ID
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
	return k.gs.made.Anchor(anchor, id, ok)
}

// madeOntoLaunch refuses (EXDEV, which makes mv copy the tree one judged
// name at a time) moving a directory the command made to where a
// directory of the launch is, or was: the project's names it already
// holds would land where the host runs them. An exchange moves each to
// the other's path.
func (k *call) madeOntoLaunch(src, dst place, flags int) unix.Errno {
	onto := func(from, to place, replaced bool) bool {
		id, ok := identityAt(from.dir, from.name)
		there, thereOK := pathguard.ID{}, false
		if replaced {
			there, thereOK = identityAt(to.dir, to.name)
		}
		return k.gs.made.OntoLaunch(id, ok, to.full(), replaced, there, thereOK)
	}
	exchange := flags&unix.RENAME_EXCHANGE != 0
	if onto(src, dst, true) || exchange && onto(dst, src, true) {
		return unix.EXDEV
	}
	return 0
}
