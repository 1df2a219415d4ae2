package nsexec

import (
	"encoding/binary"
	"path"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/srt-go/srt/pathguard"
	"github.com/srt-go/srt/seccomp"
	"golang.org/x/sys/unix"
)

// The path guard: calls that make, link, move or remove a name (mkdir,
// mknod, bind, symlink, link, rename, unlink, rmdir).

// make performs mkdir or mknod.
func (k *call) make(op seccomp.FileOp, dir int, name string, mode uint32, dev int) unix.Errno {
	pl, e := k.at(dir, name)
	if e != 0 {
		return e
	}
	defer pl.close()
	n, e := k.mayMake(op.String(), pl, op == seccomp.FileMkdir)
	if e != 0 {
		return e
	}
	if op == seccomp.FileMkdir {
		if n == pathguard.HooksDir {
			// A repository's hooks directory is no one else's to write:
			// not by a umask of 0, nor by a default ACL it would inherit
			// (the mode given bounds what one grants), nor through one
			// it would pass on to the hooks the host adds later.
			e := k.creating(func() error { return unix.Mkdirat(pl.dir, pl.name, mode&0o7777&^0o022) })
			if e == 0 {
				k.gs.noteMade(pl)
				if d, err := unix.Openat(pl.dir, pl.name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0); err == nil {
					unix.Fremovexattr(d, "system.posix_acl_default")
					unix.Close(d)
				}
			}
			return e
		}
		e := k.creating(func() error { return unix.Mkdirat(pl.dir, pl.name, mode&0o7777) })
		if e == 0 {
			k.gs.noteMade(pl)
		}
		return e
	}
	return k.creating(func() error { return unix.Mknodat(pl.dir, pl.name, mode, dev) })
}

// mayMake judges making a name at pl (pathguard.Decider.Make; op names
// the call in a violation; hooksDir: a directory, made by mkdir, which
// may be a repository's hooks directory), and says what the name is.
func (k *call) mayMake(op string, pl place, hooksDir bool) (pathguard.Name, unix.Errno) {
	if pl.name == "." || pl.name == "" {
		return pathguard.Free, unix.EEXIST
	}
	if pl.proc {
		return pathguard.Free, unix.EACCES
	}
	n, v := k.decider().Make(pl.at(), hooksDir)
	if v.Refused() {
		return n, k.refuse(op, pl, v)
	}
	return n, k.sealForMark(pl)
}

// bind performs a notified bind(fd, addr, len): a Unix socket's path
// makes a name, judged as every other name made (a socket at .bashrc, or
// a marker that makes a directory a git one, is refused); any other
// address (abstract, an autobind, IPv4, IPv6) is bound as srt read it,
// once. Neither may be left to the kernel once checked: another thread
// may change the address, or put another socket at the descriptor, in
// between.
func (k *call) bind() unix.Errno {
	req := k.req
	fd, ptr, n := int(int32(req.Args[0])), uintptr(req.Args[1]), int(uint32(req.Args[2]))
	if n < 2 || n > sockaddrStorage {
		return unix.EINVAL
	}
	addr, e := readBytes(k.pid, ptr, n)
	if e != 0 {
		return e
	}
	sock, e := k.fdOf(fd)
	if e != 0 {
		return e
	}
	defer unix.Close(sock)
	domain, err := unix.GetsockoptInt(sock, unix.SOL_SOCKET, unix.SO_DOMAIN)
	if err != nil {
		return errnoOf(err) // ENOTSOCK
	}
	if domain == unix.AF_INET || domain == unix.AF_INET6 {
		// A port bound by a socket the command has closed, but srt still
		// holds, is let go first.
		k.pol.sockets.collect()
		if k.pol.HostNamespaces && !k.pol.LocalBinding {
			// On the host's network, Landlock refuses the command every
			// TCP bind without allowLocalBinding; made by srt, the bind
			// must be refused here.
			return k.pol.deny(unix.EACCES, Event{Call: "bind", Target: "AF_INET", Reason: "a socket bound on the host's network may accept connections (allowLocalBinding)"})
		}
	}
	if domain != unix.AF_UNIX || binary.LittleEndian.Uint16(addr) != unix.AF_UNIX || n == 2 || addr[2] == 0 {
		return rawBind(sock, addr)
	}
	// A path: sun_path up to its NUL, or to the address's end.
	if n > unix.SizeofSockaddrUnix {
		return unix.EINVAL
	}
	name := addr[2:]
	if i := slices.Index(name, 0); i >= 0 {
		name = name[:i]
	}
	pl, e := k.at(unix.AT_FDCWD, string(name))
	if e != 0 {
		return e
	}
	defer pl.close()
	if pl.slash {
		return unix.ENOENT // a socket is no directory
	}
	if _, e := k.mayMake("bind", pl, false); e != 0 {
		if e == unix.EEXIST {
			return unix.EADDRINUSE
		}
		return e
	}
	return k.creating(func() error { return bindIn(sock, pl.dir, pl.name) })
}

// sockaddrStorage is the most a socket address may hold.
const sockaddrStorage = 128

func rawBind(sock int, addr []byte) unix.Errno {
	_, _, errno := unix.Syscall(unix.SYS_BIND, uintptr(sock), uintptr(unsafe.Pointer(&addr[0])), uintptr(len(addr)))
	return errno
}

// symlink performs symlink(target, name).
func (k *call) symlink(target string, dir int, name string) unix.Errno {
	if target == "" {
		return unix.ENOENT
	}
	pl, e := k.at(dir, name)
	if e != 0 {
		return e
	}
	defer pl.close()
	if pl.name == "." || pl.name == "" {
		return unix.EEXIST
	}
	if pl.proc {
		return unix.EACCES
	}
	if v := k.decider().Symlink(pl.at(), target); v.Refused() {
		return k.refuse("symlink", pl, v)
	}
	if e := k.sealForMark(pl); e != 0 {
		return e
	}
	if e := k.gitLinkAt("symlink", pl, false, target); e != 0 {
		return e
	}
	return errnoOf(unix.Symlinkat(target, pl.dir, pl.name))
}

// link performs linkat(dir, old, dir2, name, flags): a new name for a
// protected file is refused as a protected name is.
func (k *call) link(dir int, old string, dir2 int, name string, flags int) unix.Errno {
	if flags&^(unix.AT_SYMLINK_FOLLOW|unix.AT_EMPTY_PATH) != 0 {
		return unix.EINVAL
	}
	var src place
	var e unix.Errno
	switch {
	case old == "" && flags&unix.AT_EMPTY_PATH != 0:
		if dir == unix.AT_FDCWD {
			return unix.ENOENT
		}
		src, e = k.ofDescriptor(dir)
	default:
		src, e = k.at(dir, old)
		for hops := 0; e == 0 && flags&unix.AT_SYMLINK_FOLLOW != 0 && src.name != "" && src.name != "."; hops++ {
			var st unix.Stat_t
			if err := unix.Fstatat(src.dir, src.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil || st.Mode&unix.S_IFMT != unix.S_IFLNK {
				break
			}
			if hops >= maxSymlinks {
				src.close()
				return unix.ELOOP
			}
			src, e = k.followLink(src)
		}
	}
	if e != 0 {
		return e
	}
	defer src.close()
	if src.name == "." {
		return unix.EPERM // a directory
	}
	if src.proc && src.name != "" {
		return unix.EACCES
	}
	n, rule := k.judgeAt(src)
	srcV := k.decider().LinkSource(src.at(), n, rule)
	if srcV.Refused() && !srcV.KernelFirst {
		return k.refuse("link", src, srcV)
	}
	dst, e := k.at(dir2, name)
	if e != 0 {
		return e
	}
	defer dst.close()
	if _, e := k.mayMake("link", dst, false); e != 0 {
		return e
	}
	// A second name for a symlink is a symlink made there, whether the
	// symlink is named or a descriptor's (an O_PATH|O_NOFOLLOW one).
	var lst unix.Stat_t
	isLink := unix.Fstatat(src.dir, src.name, &lst, unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) == nil && lst.Mode&unix.S_IFMT == unix.S_IFLNK
	if !isLink {
		if e := k.gitLinkAt("link", dst, true, ""); e != 0 {
			return e
		}
	}
	if isLink {
		defer k.reposChanged() // a symlink made, under another name
		target, err := readlinkat(src.dir, src.name)
		if err != nil {
			return errnoOf(err)
		}
		if v := k.decider().SymlinkName(dst.at(), target); v.Refused() {
			return k.refuse("link", dst, v)
		}
		if e := k.gitLinkAt("link", dst, false, target); e != 0 {
			return e
		}
	}
	if srcV.Refused() { // after the destination's read-only mount
		return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "link", Target: src.full(), Reason: srcV.Reason})
	}
	// A file with one name, given a second here, has both inside the
	// sandbox's reach: writes to it stay allowed (linkedElsewhere). A
	// descriptor's file whose name is gone has one only if none is left
	// (O_TMPFILE): one left is elsewhere.
	var st unix.Stat_t
	var err error
	if src.name == "" { // a descriptor
		if err = unix.Fstat(src.dir, &st); err == nil {
			err = unix.Linkat(unix.AT_FDCWD, "/proc/self/fd/"+strconv.Itoa(src.dir), dst.dir, dst.name, unix.AT_SYMLINK_FOLLOW)
		}
	} else if err = unix.Fstatat(src.dir, src.name, &st, unix.AT_SYMLINK_NOFOLLOW); err == nil {
		err = unix.Linkat(src.dir, src.name, dst.dir, dst.name, 0)
	}
	if err == nil && (st.Nlink == 0 || st.Nlink == 1 && !src.unlinked) {
		k.gs.linked(st)
	}
	return errnoOf(err)
}

// linkedElsewhere refuses (reported) op on the file st, reached at full,
// when it has a name made before the run (pathguard.File.LinkedElsewhere).
func (k *call) linkedElsewhere(op string, st *unix.Stat_t, full string, unlinked bool) unix.Errno {
	why, linked := k.fileOf(st, unlinked).LinkedElsewhere(op != "write")
	if !linked {
		return 0
	}
	return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: full, Reason: why})
}

// fileOf is what pathguard needs of the file st (reached by a name now
// gone: unlinked).
func (k *call) fileOf(st *unix.Stat_t, unlinked bool) pathguard.File {
	return pathguard.File{Kind: modeType(st.Mode), Nlink: uint64(st.Nlink), Unlinked: unlinked, OwnLinks: k.gs.ownLinks[fileID{st.Dev, st.Ino}]}
}

// rename performs renameat2(dir, old, dir2, name, flags). A directory
// moved to where its names would change meaning (into a .git or .claude,
// or as one) is refused with EXDEV, so mv copies it, file by guarded
// file; a repository's config is replaced only by a copy the guard made
// of content that runs nothing.
func (k *call) rename(dir int, old string, dir2 int, name string, flags int) unix.Errno {
	src, e := k.at(dir, old)
	if e != 0 {
		return e
	}
	defer src.close()
	dst, e := k.at(dir2, name)
	if e != 0 {
		return e
	}
	defer dst.close()
	if src.name == "." || dst.name == "." || src.name == "" || dst.name == "" {
		return unix.EBUSY
	}
	if src.proc || dst.proc {
		return unix.EACCES
	}
	if src.isReadOnly() || dst.isReadOnly() {
		return unix.EROFS
	}
	// The kernel refuses to move a mount point of the caller's own mount
	// namespace (a pinned ancestor or symlink): srt is outside it, so
	// the guard asks the same of the sandbox's mounts.
	if mountPoint(src) || mountPoint(dst) {
		return unix.EBUSY
	}
	kindOf := func(p place) (uint32, unix.Errno) {
		var st unix.Stat_t
		if err := unix.Fstatat(p.dir, p.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			return 0, errnoOf(err)
		}
		return st.Mode & unix.S_IFMT, 0
	}
	srcKind, e := kindOf(src)
	if e != 0 {
		return e
	}
	if srcKind == unix.S_IFDIR || srcKind == unix.S_IFLNK || flags&unix.RENAME_EXCHANGE != 0 {
		// A directory moved (or exchanged) may bring or take a
		// repository: the repositories around directories are read
		// again after.
		defer k.reposChanged()
	}
	// check judges moving something of kind to p (pathguard.Decider.Move).
	check := func(kind uint32, p place) (pathguard.Name, unix.Errno) {
		var also []string
		for _, q := range []place{src, dst} {
			if q.path == p.path {
				also = append(also, q.name)
			}
		}
		n, v := k.decider().Move(p.at(), modeType(kind), flags != 0, also...)
		switch {
		case v.Errno == pathguard.EXDEV:
			return n, unix.EXDEV
		case v.Refused():
			return n, k.refuse("rename", p, v)
		}
		return n, 0
	}
	n, e := check(srcKind, dst)
	if e != 0 {
		return e
	}
	// A protected name is not moved away either: what the host made
	// there during the run (a hook, a .bashrc) would become the
	// command's to write under another name.
	// Nor is a .claude directory (or one exchanged with it): what the host
	// made in its commands or agents would no longer be judged by name.
	movedAway := []place{src}
	if flags&unix.RENAME_EXCHANGE != 0 {
		movedAway = append(movedAway, dst)
	}
	for _, p := range movedAway {
		if v := k.decider().MoveAway(p.at()); v.Refused() {
			return k.refuse("rename", p, v)
		}
		k.noteRemotes(p) // a config or .git, before it goes
	}
	for _, p := range []string{src.full(), dst.full()} {
		if e := k.deniedLater("rename", p); e != 0 {
			return e
		}
	}
	if !k.writable(src.full()) {
		return k.notWritable("rename", src.full())
	}
	var dstKind uint32
	if flags&unix.RENAME_EXCHANGE != 0 {
		if dstKind, e = kindOf(dst); e != 0 {
			return e
		}
		if _, e := check(dstKind, src); e != 0 {
			return e
		}
	}
	if n == pathguard.GitConfig {
		return k.replaceConfig(src, dst)
	}
	// A directory moved whole may not carry what the guard keeps, or a
	// git directory into a work tree: EXDEV, and mv copies it, one judged
	// name at a time (Decider.MoveWhole). An exchange moves each to the
	// other's path.
	if srcKind == unix.S_IFDIR && k.decider().MoveWhole(src.at(), dst.at()).Refused() ||
		dstKind == unix.S_IFDIR && k.decider().MoveWhole(dst.at(), src.at()).Refused() {
		return unix.EXDEV
	}
	// A symlink put where a literal deny entry's path goes through it
	// would send what the host later writes there (a secret at a
	// denyRead path that did not exist yet) where the command reads it.
	// A .git or commondir moved there that is not a directory: see
	// gitLinkAt.
	for _, m := range []struct {
		kind     uint32
		from, at place
	}{{srcKind, src, dst}, {dstKind, dst, src}} {
		if m.kind == unix.S_IFLNK {
			target, err := readlinkat(m.from.dir, m.from.name)
			if err != nil {
				return errnoOf(err)
			}
			if v := k.decider().Lead(m.at.at(), target); v.Refused() {
				return k.refuse("rename", m.at, v)
			}
			if e := k.gitLinkAt("rename", m.at, false, target); e != 0 {
				return e
			}
		} else if m.kind != 0 && m.kind != unix.S_IFDIR {
			if e := k.gitLinkAt("rename", m.at, true, ""); e != 0 {
				return e
			}
		}
	}
	if e := k.sealForMark(dst); e != 0 {
		return e
	}
	if flags&unix.RENAME_EXCHANGE != 0 {
		if e := k.sealForMark(src); e != 0 {
			return e
		}
	}
	if e := k.madeOntoLaunch(src, dst, flags); e != 0 {
		return e
	}
	if srcKind == unix.S_IFDIR {
		k.noteTreesMoved(src) // the repositories in it, by where they were
	}
	k.gs.noteMovedAway(src)
	if flags&unix.RENAME_EXCHANGE != 0 {
		k.gs.noteMovedAway(dst)
	} else {
		k.gs.noteGone(dst) // replaced, if a directory is there
	}
	return errnoOf(unix.Renameat2(src.dir, src.name, dst.dir, dst.name, uint(flags)))
}

// remove performs a notified unlink, unlinkat or rmdir (flags
// AT_REMOVEDIR). Removing a name is writing it: a name the command may not
// make or write, it may not remove either — a protected name the host has
// (a deeper .claude/settings.json whose deny rules the host's agent
// reads, a hook, a .bashrc), a deny entry's path or a pattern's match,
// and the hooks a repository keeps (hooksLater). What the command may
// write by content — a repository's config, index or todo list — and
// what runs nothing — a hook's sample, an empty hooks directory, a .git
// or .claude that holds nothing — may go: replacing a config with an
// empty one is allowed already. Nor does a .git file's or a commondir's
// target hold a removal back (git worktree remove deletes both ends):
// what is made there next is judged as it is made, and a symlink or a
// rename there is refused (targetAbove). The kernel would refuse a mount point of
// the caller's own namespace; srt is outside the sandbox's, so the guard
// refuses one itself (EBUSY), or it would remove what lies beneath a
// launch's mount.
func (k *call) remove(dir int, name string, flags int) unix.Errno {
	if flags&^unix.AT_REMOVEDIR != 0 {
		return unix.EINVAL
	}
	rmdir := flags&unix.AT_REMOVEDIR != 0
	op := "unlink"
	if rmdir {
		op = "rmdir"
	}
	pl, e := k.at(dir, name)
	if e != 0 {
		return e
	}
	defer pl.close()
	switch {
	case pl.name == "" || pl.proc:
		return unix.EACCES
	case pl.name == "." && rmdir:
		if path.Base(strings.TrimRight(name, "/")) == ".." {
			return unix.ENOTEMPTY
		}
		return unix.EINVAL
	case pl.name == ".":
		return unix.EISDIR
	}
	var at, here unix.Statx_t
	if err := unix.Statx(pl.dir, pl.name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_TYPE|unix.STATX_MNT_ID, &at); err != nil {
		return errnoOf(err)
	}
	kind := uint32(at.Mode) & unix.S_IFMT
	switch {
	case rmdir && kind != unix.S_IFDIR, !rmdir && pl.slash && kind != unix.S_IFDIR:
		return unix.ENOTDIR
	case !rmdir && kind == unix.S_IFDIR:
		return unix.EISDIR
	}
	if unix.Statx(pl.dir, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &here) != nil || here.Mnt_id != at.Mnt_id {
		return unix.EBUSY // a mount point (see mountPoint)
	}
	if v := k.decider().Remove(pl.at()); v.Refused() {
		return k.refuse(op, pl, v)
	}
	if pl.name == ".git" || pathguard.IsConfigName(pl.name) {
		k.noteRemotes(pl) // what it held, before it goes
	}
	if rmdir {
		k.gs.noteGone(pl)
	}
	return errnoOf(unix.Unlinkat(pl.dir, pl.name, flags))
}
