package nsexec

import (
	"os"
	"path"
	"strconv"
	"strings"
	"sync"

	"github.com/srt-go/srt/pathguard"
	"github.com/srt-go/srt/policy"
	"golang.org/x/sys/unix"
)

// The path guard: opens for writing (and, where reads are judged, for
// reading), made by the guard and handed to the command as descriptors.

// truncateOnly marks an open made for truncate(2): only a regular file
// may be truncated, and nothing is created.
const truncateOnly = 1 << 62

// openOf is how the open's flags ask, as pathguard reads them (truncate:
// truncate(2), not an open).
func openOf(flags int, truncate bool) pathguard.Open {
	acc := flags & unix.O_ACCMODE
	return pathguard.Open{WriteOnly: acc == unix.O_WRONLY, ReadWrite: acc == unix.O_RDWR, Create: flags&unix.O_CREAT != 0, Excl: flags&unix.O_EXCL != 0,
		Append: flags&unix.O_APPEND != 0, Trunc: flags&unix.O_TRUNC != 0, TruncateCall: truncate}
}

func (k *call) openFile(dir int, name string, flags int, mode uint32) answer {
	truncate := flags&truncateOnly != 0
	flags &^= truncateOnly
	pl, e := k.at(dir, name)
	for hops := 0; ; hops++ {
		if a, done := k.hop(pl, e, hops, flags); done {
			return a
		}
		if pl.proc {
			defer pl.close()
			return k.procOpen(pl, flags, truncate)
		}
		full := pl.full()
		n, rule := k.judge(pl)
		if k.deferred != nil {
			unix.Close(k.deferred.root)
			k.deferred = nil
		}
		// A repository's file whose content the guard judges: how its
		// open goes (pathguard.Defer).
		deferral, v := pathguard.Defer(pl.name, n, func() bool { return isDirAt(pl) }, openOf(flags, truncate))
		switch {
		case v.Refused():
			defer pl.close()
			return refused(k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "write", Target: full, Reason: v.Reason}))
		case deferral == pathguard.AsWritten:
			// Its content judged when written (see open).
			if d, e := k.deferTo(pl, full); e == 0 {
				k.deferred = d
				if n == pathguard.GitConfig {
					n = pathguard.Free
				}
			}
		case deferral == pathguard.MadeWhole:
			if d, e := k.deferTo(pl, full); e == 0 {
				d.made, d.max, d.hashSize = true, maxGitConfig, 20
				if pathguard.IsIndexName(pl.name) {
					d.max, d.hashSize = pathguard.MaxGitFile, k.repos().HashSize(pathguard.Dir(pl.dir))
				}
				k.deferred = d
				n = pathguard.Free
			}
		case deferral == pathguard.Emptied:
			// Written as the emptying it is, on a descriptor that reads
			// (a write fails EBADF).
			n, flags = pathguard.Free, flags&^unix.O_ACCMODE|unix.O_RDONLY
		}
		if flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL && !truncate && !pl.slash && !pathguard.Blocked(n) && k.writable(full) {
			// A file that must be new (tar, git checkout): nothing is
			// followed and nothing that exists is opened, so the kernel's
			// answer is the whole answer.
			defer pl.close()
			a, _ := k.createAt(pl, n, rule, flags, mode)
			return a
		}
		var st unix.Stat_t
		err := unix.Fstatat(pl.dir, pl.name, &st, unix.AT_SYMLINK_NOFOLLOW)
		switch {
		case err == unix.ENOENT && flags&unix.O_CREAT != 0 && !truncate:
			if pl.slash {
				pl.close()
				return refused(unix.EISDIR)
			}
			a, opened := k.createAt(pl, n, rule, flags, mode)
			if opened && (a.errno == unix.EEXIST && flags&unix.O_EXCL == 0 || a.errno == unix.ELOOP && flags&unix.O_NOFOLLOW == 0) {
				continue // made meanwhile: look again
			}
			pl.close()
			return a
		case err != nil:
			pl.close()
			return refused(errnoOf(err))
		case st.Mode&unix.S_IFMT == unix.S_IFLNK && flags&unix.O_NOFOLLOW == 0 && flags&(unix.O_CREAT|unix.O_EXCL) != unix.O_CREAT|unix.O_EXCL:
			if pathguard.Blocked(n) {
				// A protected name that is a symlink (a hook linked to a
				// script): what the host runs is where it leads, which is
				// not written through it (the launch's mounts keep it
				// read-only where they reach).
				defer pl.close()
				return refused(k.deny(unix.EROFS, "write", full, rule, n))
			}
			pl, e = k.followLink(pl)
			continue
		}
		// It exists: a write to it is judged by its name.
		a, again := k.openExisting(pl, &st, full, n, rule, flags, mode, truncate)
		if again {
			continue
		}
		pl.close()
		return a
	}
}

// hop is the start of each step of an open's walk through symlinks:
// done says a is the answer — the error of the step before, too many
// links, or a descriptor's own name (reopened as it is).
func (k *call) hop(pl place, e unix.Errno, hops, flags int) (a answer, done bool) {
	switch {
	case e != 0:
		return refused(e), true
	case hops > maxSymlinks:
		pl.close()
		return refused(unix.ELOOP), true
	case pl.name == "":
		return k.reopen(pl, flags), true
	}
	return answer{}, false
}

// createAt makes the file at pl, its name judged n (rule), for open(flags,
// mode): the decision (pathguard.Decider.Create), the seal of a
// directory about to become a git directory, then the open itself under
// the command's umask; opened says the answer is the open's own.
func (k *call) createAt(pl place, n pathguard.Name, rule string, flags int, mode uint32) (a answer, opened bool) {
	if v := k.decider().Create(pl.at(), n, rule); v.Refused() {
		return refused(k.refuse("write", pl, v)), false
	}
	if e := k.sealForMark(pl); e != 0 {
		return refused(e), false
	}
	var fd int
	if e := k.creating(func() (err error) {
		fd, err = k.openAt(pl, flags|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, mode)
		return err
	}); e != 0 {
		return refused(e), true
	}
	return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}, true
}

// openExisting opens the existing file at pl (st) for writing; again:
// it was swapped for a symlink meanwhile, look again.
func (k *call) openExisting(pl place, st *unix.Stat_t, full string, n pathguard.Name, rule string, flags int, mode uint32, truncate bool) (answer, bool) {
	{
		excl := flags&(unix.O_CREAT|unix.O_EXCL) == unix.O_CREAT|unix.O_EXCL
		switch v := k.decider().Write(pl.at(), n, rule, k.fileOf(st, false), excl); {
		case v.Errno == pathguard.EEXIST:
			return refused(unix.EEXIST), false
		case v.KernelFirst && k.policyLater(full) && k.onReadOnlyMount(pl):
			return refused(unix.EROFS), false // a denyWrite file of the launch: its mount says so first
		case v.Errno == pathguard.EROFS:
			return refused(k.pol.deny(unix.EROFS, Event{Kind: "filesystem", Call: "write", Target: full, Reason: v.Reason})), false
		case v.Refused():
			return refused(k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "write", Target: full, Reason: v.Reason})), false
		}
		if flags&unix.O_ACCMODE == unix.O_RDWR && k.pol.Guard.Policy != nil && k.pol.Guard.Policy.ReadGuard != "" {
			if e := k.readDenied(pl, full, st); e != 0 {
				return refused(e), false // an open for writing reads too
			}
		}
		kind := st.Mode & unix.S_IFMT
		if truncate && kind != unix.S_IFREG {
			if kind == unix.S_IFDIR {
				return refused(unix.EISDIR), false
			}
			return refused(unix.EINVAL), false
		}
		switch kind {
		case unix.S_IFCHR:
			if unix.Major(st.Rdev) == ttyMajor && unix.Minor(st.Rdev) == 0 {
				return k.controllingTTY(flags), false
			}
			return k.reopenAt(pl, flags, false), false
		case unix.S_IFIFO, unix.S_IFBLK:
			return k.reopenAt(pl, flags, true), false
		}
		var fd int
		e := k.creating(func() (err error) {
			fd, err = k.openAt(pl, flags|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, mode)
			return err
		})
		if e == unix.ELOOP && flags&unix.O_NOFOLLOW == 0 {
			return answer{}, true
		}
		if e != 0 {
			return refused(e), false
		}
		return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}, false
	}
}

// openRead performs an open for reading (the filter sends those only
// when a denyRead entry reaches past what the launch's mounts hide): a
// path a denyRead entry covers now, or a hidden file by another name, is
// refused; anything else is opened for the command as it asked.
func (k *call) openRead(dir int, name string, flags int) answer {
	pl, e := k.at(dir, name)
	for hops := 0; ; hops++ {
		if a, done := k.hop(pl, e, hops, flags); done {
			return a
		}
		if pl.proc {
			defer pl.close()
			return k.procRead(pl, flags)
		}
		full := pl.full()
		var st unix.Stat_t
		if err := unix.Fstatat(pl.dir, pl.name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
			pl.close()
			return refused(errnoOf(err))
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK && flags&(unix.O_NOFOLLOW|unix.O_PATH) == 0 {
			pl, e = k.followLink(pl)
			continue
		}
		if e := k.readDenied(pl, full, &st); e != 0 {
			pl.close()
			return refused(e)
		}
		a, again := k.openReadAt(pl, &st, flags)
		if again {
			continue // swapped for a symlink between the stat and the open: look again
		}
		pl.close()
		return a
	}
}

// openReadAt opens the file st at pl for reading; again: it was swapped
// for a symlink meanwhile.
func (k *call) openReadAt(pl place, st *unix.Stat_t, flags int) (answer, bool) {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFCHR:
		if unix.Major(st.Rdev) == ttyMajor && unix.Minor(st.Rdev) == 0 && flags&unix.O_PATH == 0 {
			return k.controllingTTY(flags), false
		}
		return k.reopenAt(pl, flags, false), false
	case unix.S_IFIFO, unix.S_IFBLK:
		if flags&unix.O_PATH == 0 {
			return k.reopenAt(pl, flags, true), false
		}
	}
	fd, err := k.openAt(pl, flags|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err == unix.ELOOP && flags&(unix.O_NOFOLLOW|unix.O_PATH) == 0 {
		return answer{}, true
	}
	if err != nil {
		return refused(errnoOf(err)), false
	}
	return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}, false
}

// readDenied refuses (EACCES) reading full, a file st found at pl (no
// name: a descriptor's): a denyRead entry covers it now, or it is a
// hidden file by another name. A masked credential file is read as its
// mask while the mask's mount is still on it; the host's own file, once
// the host replaced it and the kernel dropped that mount, is refused.
func (k *call) readDenied(pl place, full string, st *unix.Stat_t) unix.Errno {
	if k.pol.MaskedFiles[full] && pl.name != "" && pl.name != "." && mountPoint(pl) && k.isMask(full, st) {
		return 0
	}
	if r, ok := k.pol.Guard.ReadLater(full); ok {
		if r.Glob == nil && r.Path == full && st.Mode&unix.S_IFMT == unix.S_IFDIR && pl.name != "" && pl.name != "." && mountPoint(pl) && k.isMask(full, st) {
			// A hidden directory still under the launch's empty mount,
			// listed by a walk of its parent (go build ./..., tar, grep
			// -r): empty, as without judged reads.
			return 0
		}
		return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "read", Target: full, Reason: r.Why})
	}
	if k.pol.Guard.Policy != nil {
		// An entry spelled through a symlink denies where the link leads
		// now: the host may have re-aimed it.
		for _, r := range k.pol.Guard.Policy.SpelledReads() {
			if now, ok := k.resolved(r.Path); ok && now != r.Path && policy.Under(full, now) {
				return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "read", Target: full, Reason: r.Why + " (where " + r.Path + " leads now)"})
			}
		}
	}
	// A hidden file with other names found at launch stays one when the
	// other names go: the count of names proves nothing.
	if st.Mode&unix.S_IFMT == unix.S_IFREG {
		if why, ok := k.pol.Guard.HiddenInode(policy.FileID{Dev: st.Dev, Ino: st.Ino}); ok {
			return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "read", Target: full, Reason: why + " (a hard link to a hidden file)"})
		}
	}
	return 0
}

// isMask reports whether the file st is the mask at full: in the
// sandbox's own mount namespace (its init's root), the mask's mount is
// still on full and holds st. Without nested namespaces every process
// sees that namespace; with them, a process's own bind mount of the
// host's file (one the host replaced, which took the mask's mount with
// it) would pass for the mask in its namespace.
func (k *call) isMask(full string, st *unix.Stat_t) bool {
	if !k.pol.NestedNamespaces {
		return true
	}
	init := int(k.pol.initPid.Load())
	if init <= 0 {
		return false
	}
	root, err := unix.Open(k.pol.Proc+"/"+strconv.Itoa(init)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	defer unix.Close(root)
	dir, err := openat2(root, path.Dir(full), &unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return false
	}
	there := place{dir: dir, name: path.Base(full)}
	defer there.close()
	var mask unix.Stat_t
	return mountPoint(there) && unix.Fstatat(dir, there.name, &mask, unix.AT_SYMLINK_NOFOLLOW) == nil &&
		mask.Dev == st.Dev && mask.Ino == st.Ino
}

// procRead opens a procfs entry for reading. srt's rights over the
// sandbox's processes exceed the command's only for the init, which is
// undumpable to the command: nothing of the init's (any of its threads)
// is opened; the rest is, as the command asked, no magic link followed.
func (k *call) procRead(pl place, flags int) answer {
	if pl.self == "" {
		parts := strings.Split(strings.TrimPrefix(pl.full(), "/proc/"), "/")
		for i, p := range parts {
			if i > 2 || i == 1 && p != "task" {
				break
			}
			if i == 1 {
				continue
			}
			if n, err := strconv.Atoi(p); err == nil && n > 0 && k.ofInit(n) {
				return refused(unix.EACCES)
			}
		}
	}
	// The command's own magic links (/proc/self/exe) lead where they
	// would for it; nobody else's are followed.
	nofollow := unix.O_NOFOLLOW
	if pl.self != "" {
		nofollow = 0
	}
	fd, err := unix.Openat(pl.dir, pl.name, flags|nofollow|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		return refused(errnoOf(err))
	}
	return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}
}

// ofInit reports whether the sandbox's pid n (its procfs numbering) is a
// thread of its init: PID 1, whose thread group id is 1 there.
func (k *call) ofInit(n int) bool {
	if n == 1 {
		return true
	}
	root, e := k.rootFD()
	if e != 0 {
		return true
	}
	fd, err := unix.Openat(root, "proc/"+strconv.Itoa(n)+"/status", unix.O_RDONLY|unix.O_CLOEXEC|unix.O_NOFOLLOW, 0)
	if err != nil {
		return false // no such process: the open will say so
	}
	defer unix.Close(fd)
	var buf [1024]byte
	m, _ := unix.Read(fd, buf[:])
	tgid, ok := statusField(string(buf[:m]), "Tgid")
	return !ok || tgid == "1"
}

// reopenAt opens the special file at pl through an O_PATH descriptor of
// it (the node itself, whatever replaces the name meanwhile); mayBlock:
// on a thread of its own.
func (k *call) reopenAt(pl place, flags int, mayBlock bool) answer {
	fd, err := k.openAt(pl, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return refused(errnoOf(err))
	}
	return reopenFD(fd, flags, mayBlock)
}

// writableHere refuses (EACCES, or EROFS) a write to the file st that
// the descriptor place pl holds, when it is not a file the sandbox may
// write at its path: srt reopens or changes it through its own copy of
// the descriptor, on whatever mount that holds — a file the caller handed
// the command for reading (its stdin) is on the caller's mount, which the
// sandbox's read-only mounts and Landlock layer never see. In the
// fallback the plan's allowWrite decides (k.writable).
func (k *call) writableHere(pl place, st *unix.Stat_t) unix.Errno {
	if k.pol.Writable != nil || !strings.HasPrefix(pl.path, "/") || !treeKind(st) {
		return 0
	}
	named, ok := k.foundAgain(pl.path, st)
	if !ok {
		return unix.EACCES // not there: a file outside the sandbox's tree
	}
	defer named.close()
	if k.onReadOnlyMount(named) {
		return unix.EROFS
	}
	return 0
}

// treeKind reports whether st is a file of a directory tree (a regular
// file, a directory, a symlink), which has a path to judge, unlike a
// pipe, a socket or an anonymous inode.
func treeKind(st *unix.Stat_t) bool {
	switch st.Mode & unix.S_IFMT {
	case unix.S_IFREG, unix.S_IFDIR, unix.S_IFLNK:
		return true
	}
	return false
}

// reopen opens the command's own descriptor (by /proc/self/fd/N) anew,
// as the kernel would: what it names, judged by its path.
func (k *call) reopen(pl place, flags int) answer {
	if n, rule := k.pol.Guard.Judge(pl.path); strings.HasPrefix(pl.path, "/") && pathguard.Blocked(n) {
		unix.Close(pl.dir)
		return refused(k.deny(unix.EROFS, "write", pl.path, rule, n))
	}
	var st unix.Stat_t
	if err := unix.Fstat(pl.dir, &st); err != nil {
		unix.Close(pl.dir)
		return refused(errnoOf(err))
	}
	if !strings.HasPrefix(pl.path, "/") && treeKind(&st) {
		unix.Close(pl.dir)
		return refused(unix.EACCES) // a file of a tree, with no path to judge
	}
	if strings.HasPrefix(pl.path, "/") && k.pol.Guard.Policy != nil && k.pol.Guard.Policy.ReadGuard != "" {
		if e := k.readDenied(pl, pl.path, &st); e != 0 {
			unix.Close(pl.dir)
			return refused(e)
		}
	}
	if flags&(unix.O_WRONLY|unix.O_RDWR|unix.O_TRUNC) != 0 {
		e := k.linkedElsewhere("write", &st, pl.path, pl.unlinked)
		if e == 0 && !pl.writesAlready() {
			e = k.writableHere(pl, &st)
		}
		if e == 0 && path.Base(pl.path) == ".git" && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			// A .git file is written only through the pipe of an open
			// by its name (see open).
			e = k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: "write", Target: pl.path, Reason: "a .git file is written only when opened by its name, through the guard"})
		}
		if e == 0 && strings.HasPrefix(pl.path, "/") {
			switch n, rule := k.judgeAt(pl); {
			case pathguard.Blocked(n):
				// What names alone cannot tell: a git directory's config
				// or hooks, known by what the directory holds.
				e = k.deny(unix.EROFS, "write", pl.path, rule, n)
			case !k.writable(pl.path):
				// The fallback, which has no read-only mounts.
				e = k.notWritable("write", pl.path)
			default:
				e = k.deniedLater("write", pl.path)
			}
		}
		if e != 0 {
			unix.Close(pl.dir)
			return refused(e)
		}
	}
	kind := st.Mode & unix.S_IFMT
	return reopenFD(pl.dir, flags&^(unix.O_CREAT|unix.O_EXCL), kind == unix.S_IFIFO || kind == unix.S_IFBLK)
}

// reopenFD opens the file of srt's descriptor fd anew with flags, and
// closes fd.
func reopenFD(fd int, flags int, mayBlock bool) answer {
	b := &blockingOpen{fd: fd, flags: flags}
	if mayBlock {
		return answer{fd: -1, cloexec: flags&unix.O_CLOEXEC != 0, open: b}
	}
	nfd, e := b.open()
	return answer{errno: e, fd: nfd, cloexec: flags&unix.O_CLOEXEC != 0}
}

// blockingOpen is an open of srt's O_PATH descriptor fd of a FIFO (or
// block device) that may wait for the other end; release ends the wait
// by opening that other end, without waiting, for a moment.
type blockingOpen struct {
	fd, flags int
	mu        sync.Mutex
	done      bool
}

func (b *blockingOpen) open() (int, unix.Errno) {
	nfd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(b.fd), b.flags|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	b.mu.Lock()
	b.done = true
	unix.Close(b.fd)
	b.mu.Unlock()
	return nfd, errnoOf(err)
}

func (b *blockingOpen) release() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.done {
		return
	}
	other := unix.O_WRONLY
	if b.flags&unix.O_ACCMODE != unix.O_RDONLY {
		other = unix.O_RDONLY
	}
	if fd, err := unix.Open("/proc/self/fd/"+strconv.Itoa(b.fd), other|unix.O_NONBLOCK|unix.O_CLOEXEC, 0); err == nil {
		unix.Close(fd)
	}
}

// controllingTTY opens what /dev/tty is for the process: its controlling
// terminal, a pty of the sandbox's devpts.
func (k *call) controllingTTY(flags int) answer {
	stat, err := os.ReadFile(k.pol.Proc + "/" + strconv.Itoa(k.pid) + "/stat")
	if err != nil {
		return refused(unix.ESRCH)
	}
	// Fields after the command name, which may hold spaces: state, ppid,
	// pgrp, session, tty_nr.
	s := string(stat)
	fields := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(fields) < 5 {
		return refused(unix.ENXIO)
	}
	nr, _ := strconv.ParseUint(fields[4], 10, 32)
	major, minor := (nr>>8)&0xfff, (nr&0xff)|((nr>>12)&0xfff00)
	if nr == 0 || major < ptsMajor || major > ptsMajor+7 {
		return refused(unix.ENXIO)
	}
	root, e := k.rootFD()
	if e != 0 {
		return refused(e)
	}
	pts := "/dev/pts/" + strconv.FormatUint((major-ptsMajor)*256+minor, 10)
	fd, err := openat2(root, pts, &unix.OpenHow{Flags: uint64(flags&^(unix.O_CREAT|unix.O_EXCL|unix.O_TRUNC)) | unix.O_NOCTTY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_SYMLINKS})
	if err != nil {
		return refused(errnoOf(err))
	}
	return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}
}

// procOpen is an open for writing in a procfs. srt owns the sandbox's
// user namespace, so its rights over every process there exceed the
// command's (the init is undumpable to the command, not to srt): the
// guard opens only what a process may open of its own, named as its own
// (/proc/self/…), through srt's procfs; anything else there is refused.
// A user namespace map, which the kernel reads as its opener's (who must
// be in the namespace or its parent), is opened by the sandbox's init,
// asked over the run's link (allowNestedUserNamespaces only): no call is
// let through to the kernel after the guard read its path.
func (k *call) procOpen(pl place, flags int, truncate bool) answer {
	if k.pol.NestedNamespaces && k.ofInitThread() {
		// The init opening a map for the command (askInitMap): its own
		// call, from memory the command cannot reach (it is undumpable).
		return answer{fd: -1, cont: true}
	}
	if pl.self == "" || truncate {
		return refused(unix.EACCES)
	}
	if k.pol.Writable != nil {
		return refused(unix.EACCES) // the fallback: Landlock leaves /proc read-only
	}
	switch {
	case procSelfMaps[pl.self]:
		// A shell's ">" adds O_CREAT and O_TRUNC, which mean nothing
		// there; the init opens it for writing.
		if !k.pol.NestedNamespaces {
			return refused(unix.EPERM)
		}
		pid, ok := k.sandboxTgid()
		if !ok {
			return refused(unix.ESRCH)
		}
		return answer{fd: -1, cloexec: flags&unix.O_CLOEXEC != 0, askInit: &mapRequest{Pid: pid, File: pl.self}}
	case procSelfFiles[pl.self]:
		fd, err := unix.Openat(pl.dir, pl.name, flags&^(unix.O_CREAT|unix.O_EXCL|unix.O_TRUNC)|unix.O_NOFOLLOW|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
		if err != nil {
			return refused(errnoOf(err))
		}
		return answer{fd: fd, cloexec: flags&unix.O_CLOEXEC != 0}
	}
	return refused(unix.EACCES)
}

// ofInitThread reports whether the call comes from a thread of the
// sandbox's init.
func (k *call) ofInitThread() bool {
	init := int(k.pol.initPid.Load())
	if init <= 0 {
		return false
	}
	var st unix.Stat_t
	return k.pid == init || unix.Stat(k.pol.Proc+"/"+strconv.Itoa(init)+"/task/"+strconv.Itoa(k.pid), &st) == nil
}
