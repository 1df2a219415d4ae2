package nsexec

import (
	"errors"
	"os"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/srt-go/srt/pathguard"
	"github.com/srt-go/srt/policy"
	"golang.org/x/sys/unix"
)

// The path guard: where a call's path leads, resolved as the command
// would (its root, cwd, dirfd, /proc/self), the command's descriptors and
// umask, and the judgement of a name where it lands.

// rootFD is the process's root.
func (k *call) rootFD() (int, unix.Errno) {
	if k.root >= 0 {
		return k.root, 0
	}
	if k.gs.root >= 0 && !k.pol.NestedNamespaces {
		k.root = k.gs.root
		return k.root, 0
	}
	fd, err := unix.Open(k.pol.Proc+"/"+strconv.Itoa(k.pid)+"/root", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil || !stillWaiting(k.listener, k.req.ID) {
		if err == nil {
			unix.Close(fd)
		}
		return -1, unix.ESRCH
	}
	k.root = fd
	if !k.pol.NestedNamespaces {
		// No process there may chroot (no capability, and no user
		// namespace of its own to get one): this root is every one's.
		k.gs.root = fd
	}
	return fd, 0
}

// procLink reads a link of the process's /proc directory (cwd, fd/N):
// the path of a directory or file, as the sandbox names it.
func (k *call) procLink(which string) (string, unix.Errno) {
	target, err := os.Readlink(k.pol.Proc + "/" + strconv.Itoa(k.pid) + "/" + which)
	if err != nil {
		if errors.Is(err, unix.ENAMETOOLONG) {
			// A directory deeper than the kernel can name: the guard
			// judges by path, so it cannot make a name there.
			return "", unix.ENAMETOOLONG
		}
		if strings.HasPrefix(which, "fd/") {
			return "", unix.EBADF
		}
		return "", unix.ESRCH
	}
	if !strings.HasPrefix(target, "/") {
		return "", unix.ENOTDIR // a pipe, a socket, an anonymous inode
	}
	if strings.HasSuffix(target, " (deleted)") {
		return "", unix.ENOENT
	}
	// No check that the caller still waits (its pid not yet another's):
	// whatever the guard makes, it makes where it judged, and a caller
	// gone gets no answer.
	return target, 0
}

// selfAlias rewrites the names by which a process means itself: /dev/fd,
// /dev/std{in,out,err}, /proc/self, /proc/thread-self and /proc/<n> where
// own(n) (its thread or process number, as its procfs numbers it). It
// returns the descriptor number and what follows it for a descriptor's
// name, or (fd -1) the rest of a /proc/self name; ok false when name is
// no such alias.
func selfAlias(name string, own func(n int) bool) (fd int, rest string, procPath string, ok bool) {
	name = path.Clean(name)
	for alias, fdNum := range map[string]string{"/dev/stdin": "0", "/dev/stdout": "1", "/dev/stderr": "2"} {
		if name == alias {
			name = "/proc/self/fd/" + fdNum
		}
	}
	if r, found := strings.CutPrefix(name, "/dev/fd/"); found {
		name = "/proc/self/fd/" + r
	}
	var r string
	found := false
	for _, prefix := range []string{"/proc/self/", "/proc/thread-self/"} {
		if r, found = strings.CutPrefix(name, prefix); found {
			break
		}
	}
	if p, ok := strings.CutPrefix(name, "/proc/"); ok && !found {
		num, tail, _ := strings.Cut(p, "/")
		if n, err := strconv.Atoi(num); err == nil && n > 0 && strconv.Itoa(n) == num && tail != "" && own(n) {
			r, found = tail, true
		}
	}
	if !found {
		return 0, "", "", false
	}
	if f, ok := strings.CutPrefix(r, "fd/"); ok {
		num, tail, _ := strings.Cut(f, "/")
		if n, err := strconv.Atoi(num); err == nil && n >= 0 && strconv.Itoa(n) == num {
			return n, tail, "", true
		}
		return 0, "", "", false
	}
	return -1, "", r, true
}

// ownNumber reports whether n is the calling thread's number, or its
// process's, in the procfs it sees (its own pid namespace's: the last of
// NSpid and NStgid in its status as srt reads it).
func (k *call) ownNumber(n int) bool {
	status, err := os.ReadFile(k.pol.Proc + "/" + strconv.Itoa(k.pid) + "/status")
	if err != nil {
		return false
	}
	for _, key := range []string{"NSpid", "NStgid"} {
		v, _ := statusField(string(status), key)
		if f := strings.Fields(v); len(f) > 0 && f[len(f)-1] == strconv.Itoa(n) {
			return true
		}
	}
	return false
}

// at resolves where name, relative to dirfd dir, is: its directory,
// pinned, and the last name. Symlinks on the way are followed in the
// process's root; the last name is not followed.
func (k *call) at(dir int, name string) (place, unix.Errno) {
	if name == "" {
		return place{dir: -1}, unix.ENOENT
	}
	if fd, rest, procPath, ok := selfAlias(name, k.ownNumber); ok {
		switch {
		case procPath != "":
			parts := strings.Split(procPath, "/")
			for i, c := range parts[:len(parts)-1] {
				switch c {
				case "cwd", "root":
					if i != 0 {
						return place{dir: -1}, unix.EACCES
					}
				case "exe", "fd", "map_files", "ns":
					return place{dir: -1}, unix.EACCES // through a magic link
				}
			}
			switch parts[0] {
			case "cwd":
				cwd, e := k.procLink("cwd")
				if e != 0 {
					return place{dir: -1}, e
				}
				return k.at(unix.AT_FDCWD, cwd+"/"+strings.Join(parts[1:], "/"))
			case "root":
				if len(parts) > 1 {
					return k.at(unix.AT_FDCWD, "/"+strings.Join(parts[1:], "/"))
				}
			}
			return k.atHost(procPath)
		case rest == "":
			return k.ofDescriptor(fd)
		default:
			base, e := k.procLink("fd/" + strconv.Itoa(fd))
			if e != 0 {
				return place{dir: -1}, e
			}
			name = base + "/" + rest
		}
	}
	full := name
	if !strings.HasPrefix(name, "/") {
		which := "cwd"
		if dir != unix.AT_FDCWD {
			which = "fd/" + strconv.Itoa(dir)
		}
		base, e := k.procLink(which)
		if e != 0 {
			return place{dir: -1}, e
		}
		full = base + "/" + name
	}
	slash := strings.HasSuffix(full, "/")
	full = strings.TrimRight(full, "/")
	parent, last := "/", "."
	if full != "" {
		i := strings.LastIndexByte(full, '/')
		parent, last = full[:i], full[i+1:]
		if parent == "" {
			parent = "/"
		}
	}
	if last == ".." {
		parent, last = full, "."
	}
	root, e := k.rootFD()
	if e != 0 {
		return place{dir: -1}, e
	}
	if last == "." {
		parent = full
		if parent == "" {
			parent = "/"
		}
	}
	// Without a symlink on the way, where the walk ends is what the
	// path says, read lexically; else the kernel says where it ended.
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_DIRECTORY | unix.O_CLOEXEC,
		Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS | unix.RESOLVE_NO_SYMLINKS}
	fd, err := openat2(root, parent, &how)
	real := path.Clean(parent)
	if err == unix.ELOOP {
		how.Resolve &^= unix.RESOLVE_NO_SYMLINKS
		if fd, err = openat2(root, parent, &how); err == nil {
			if real, err = k.gs.pathOf(fd); err != nil {
				unix.Close(fd)
				return place{dir: -1}, unix.ENOENT
			}
		}
	}
	if err != nil {
		return place{dir: -1}, errnoOf(err)
	}
	pl := place{dir: fd, path: real, name: last, slash: slash, fsKnown: k.pol.NestedNamespaces}
	if pl.fsKnown {
		// A nested mount namespace may hold a procfs anywhere.
		var fs unix.Statfs_t
		if err := unix.Fstatfs(fd, &fs); err != nil {
			unix.Close(fd)
			return place{dir: -1}, unix.ENOENT
		}
		pl.proc, pl.readOnly = fs.Type == unix.PROC_SUPER_MAGIC, fs.Flags&unix.ST_RDONLY != 0
		if !pl.proc {
			src, mnt, ok := k.sourcePath(pl.dir, pl.name)
			if !ok {
				unix.Close(fd)
				return place{dir: -1}, unix.EACCES // where it is cannot be told
			}
			if src != "" && src != pl.full() {
				pl.as = src
			}
			pl.mnt = mnt
		}
	} else {
		// Else the only procfs is the one at /proc: nothing inside may
		// mount.
		pl.proc = policy.Under(real, "/proc")
	}
	return pl, 0
}

// atHost is the process's own /proc entry rest (/proc/self/rest), in
// srt's procfs.
func (k *call) atHost(rest string) (place, unix.Errno) {
	p := k.pol.Proc + "/" + strconv.Itoa(k.pid) + "/" + rest
	parent, last := path.Split(p)
	fd, err := unix.Open(parent, unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil || !stillWaiting(k.listener, k.req.ID) {
		if err == nil {
			unix.Close(fd)
		}
		return place{dir: -1}, unix.ENOENT
	}
	return place{dir: fd, path: path.Clean(parent), name: last, proc: true, self: rest}, 0
}

// ofDescriptor is the command's descriptor n, taken as the object itself.
func (k *call) ofDescriptor(n int) (place, unix.Errno) {
	fd, fl, e := k.descriptor(n)
	if e != 0 {
		return place{dir: -1}, e
	}
	p, err := k.gs.pathOf(fd)
	if err != nil {
		// A file deeper than the kernel can name (moved there after it
		// was opened): the guard judges by path, so it does nothing
		// with it.
		unix.Close(fd)
		if errors.Is(err, unix.ENAMETOOLONG) {
			return place{dir: -1}, unix.ENAMETOOLONG
		}
		return place{dir: -1}, unix.EBADF
	}
	trimmed := strings.TrimSuffix(p, " (deleted)")
	pl := place{dir: fd, path: trimmed, unlinked: trimmed != p, fileFlags: fl}
	if k.pol.NestedNamespaces && !pl.unlinked && strings.HasPrefix(p, "/") {
		// Reached through another view (a nested bind, a chroot): judged
		// where the sandbox has it.
		src, _, ok := k.sourcePath(fd, "")
		if !ok {
			unix.Close(fd)
			return place{dir: -1}, unix.EACCES
		}
		if src != "" {
			pl.as = src
		}
	}
	return pl, 0
}

// fdOf is a copy of the command's descriptor n, taken through a pidfd of
// the calling thread that is kept for its next call: while that thread
// lives, the pidfd names it and no other; once it is gone, the copy fails
// and a new pidfd is opened (and checked against the notification, as
// pol.fdOf does).
func (k *call) fdOf(n int) (int, unix.Errno) {
	fd, _, e := k.descriptor(n)
	return fd, e
}

// descriptor is fdOf with the file status flags of the command's
// descriptor (F_GETFL's).
func (k *call) descriptor(n int) (fd, flags int, e unix.Errno) {
	if !pidfdGetfd() {
		return k.pol.procDescriptor(k.listener, k.req, n)
	}
	fd, e = k.takeFD(n)
	if e != 0 {
		return -1, 0, e
	}
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		unix.Close(fd)
		return -1, 0, unix.EBADF
	}
	return fd, flags, 0
}

// takeFD is fdOf by pidfd_getfd.
func (k *call) takeFD(n int) (int, unix.Errno) {
	if pidfd, ok := k.gs.pidfds[k.pid]; ok {
		if fd, err := unix.PidfdGetfd(pidfd, n, 0); err == nil {
			return fd, 0
		}
		unix.Close(pidfd)
		delete(k.gs.pidfds, k.pid)
	}
	pidfd, e := k.pol.callerPidfd(k.listener, k.req)
	if e != 0 {
		return -1, e
	}
	if len(k.gs.pidfds) >= maxUmasks {
		k.gs.forgetPidfds()
	}
	k.gs.pidfds[k.pid] = pidfd
	return getfd(pidfd, n)
}

// pathOf reads the path of srt's descriptor fd, from a /proc/self/fd kept
// open: one name looked up, not four.
func (gs *guardState) pathOf(fd int) (string, error) {
	if gs.selfFDs < 0 {
		dir, err := unix.Open("/proc/self/fd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil {
			return os.Readlink("/proc/self/fd/" + strconv.Itoa(fd))
		}
		gs.selfFDs = dir
	}
	return readlinkat(gs.selfFDs, strconv.Itoa(fd))
}

// followLink moves from the symlink at pl (closed) to where it leads.
func (k *call) followLink(pl place) (place, unix.Errno) {
	target, err := readlinkat(pl.dir, pl.name)
	pl.close()
	if err != nil {
		return place{dir: -1}, errnoOf(err)
	}
	return k.follow(place{path: pl.path, slash: pl.slash}, target)
}

// follow moves pl to where the symlink target leads, as the kernel would
// from the symlink's directory.
func (k *call) follow(pl place, target string) (place, unix.Errno) {
	if target == "" {
		return place{dir: -1}, unix.ENOENT
	}
	if !strings.HasPrefix(target, "/") {
		if _, _, _, ok := selfAlias(target, k.ownNumber); !ok {
			target = pl.path + "/" + target
		}
	}
	if pl.slash {
		target += "/"
	}
	return k.at(unix.AT_FDCWD, target)
}

// umaskOf is the umask of the thread that made the call.
func (k *call) umaskOf() (int, unix.Errno) {
	if k.umask >= 0 {
		return k.umask, 0
	}
	gs, tid := k.gs, k.pid
	for t, want := range gs.pending {
		if u, err := readUmask(k.pol.Proc, t); err != nil || u == want {
			delete(gs.pending, t) // gone, or its umask is in place
		}
	}
	if e, ok := gs.umasks[tid]; ok && len(gs.pending) == 0 {
		now := time.Now()
		if now.Sub(e.checked) < umaskFresh || unix.PidfdSendSignal(e.pidfd, 0, nil, 0) == nil {
			if now.Sub(e.checked) >= umaskFresh {
				e.checked = now
				gs.umasks[tid] = e
			}
			k.umask = e.umask
			return e.umask, 0
		}
		unix.Close(e.pidfd)
		delete(gs.umasks, tid)
	}
	u, err := readUmask(k.pol.Proc, tid)
	if err != nil {
		return 0, unix.ESRCH
	}
	k.umask = u
	if len(gs.pending) == 0 {
		if len(gs.umasks) >= maxUmasks {
			gs.forget()
		}
		if pidfd, err := k.pol.pidfd(tid); err == nil {
			gs.umasks[tid] = umaskEntry{umask: u, pidfd: pidfd, checked: time.Now()}
		}
	}
	return u, 0
}

// noteUmask is a umask(2) call on its way: the cache is emptied, and
// kept empty until the caller is seen with its new umask.
func (gs *guardState) noteUmask(tid, umask int) {
	gs.forget()
	gs.pending[tid] = umask & 0o777
}

// readUmask reads a thread's umask from its status in procfs.
func readUmask(proc string, tid int) (int, error) {
	fd, err := unix.Open(proc+"/"+strconv.Itoa(tid)+"/status", unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	var buf [512]byte // Name (at most 64 bytes, escaped) and Umask come first
	n, err := unix.Read(fd, buf[:])
	if err != nil {
		return 0, err
	}
	v, ok := statusField(string(buf[:n]), "Umask")
	if !ok || len(v) < 4 {
		return 0, unix.EINVAL
	}
	u, err := strconv.ParseUint(v[:4], 8, 32)
	return int(u), err
}

// creating runs f under the command's umask (the serving thread has a
// filesystem context of its own, whose umask only this sets; where it
// shares srt's, see sharedUmask).
func (k *call) creating(f func() error) unix.Errno {
	u, e := k.umaskOf()
	if e != 0 {
		return e
	}
	if sharedFS.Load() {
		return sharedUmask(u, f)
	}
	if k.gs.thread != u {
		unix.Umask(u)
		k.gs.thread = u
	}
	return errnoOf(f())
}

// judgeAt is judge for any place: a descriptor's (no name) is judged
// at its path, resolved again in the command's root, so that what names
// cannot tell (a git directory known by what it holds) is seen too.
func (k *call) judgeAt(pl place) (pathguard.Name, string) {
	if pl.name != "" || !strings.HasPrefix(pl.path, "/") {
		return k.judge(pl)
	}
	if p := pl.full(); !pathguard.GitNamed(path.Base(path.Dir(p)), path.Base(p)) {
		return k.judgeName(pl, p) // no name judge looks into
	}
	// Found again at its path, it is judged there — if it is the same
	// file: one that cannot be (a directory on the way the guard may not
	// search, the file moved meanwhile, a path the command's root does
	// not hold) could be a git directory's hook or config, and is
	// refused as one.
	var here unix.Stat_t
	if unix.Fstat(pl.dir, &here) != nil {
		return pathguard.Protected, pl.path
	}
	named, ok := k.foundAgain(pl.path, &here)
	if !ok {
		return pathguard.Protected, "(the directory of " + pl.path + " cannot be looked into)"
	}
	defer named.close()
	return k.judge(named)
}

// foundAgain resolves path in the command's root and returns where it
// is, if the file there is st (closed, ok false, if not).
func (k *call) foundAgain(path string, st *unix.Stat_t) (place, bool) {
	named, e := k.at(unix.AT_FDCWD, path)
	if e != 0 {
		return place{dir: -1}, false
	}
	var there unix.Stat_t
	if unix.Fstatat(named.dir, named.name, &there, unix.AT_SYMLINK_NOFOLLOW) != nil || there.Dev != st.Dev || there.Ino != st.Ino {
		named.close()
		return place{dir: -1}, false
	}
	return named, true
}

// judge is what the name at pl is (pathguard.Decider.Judge): the name
// rules, a project's name free in a tree the command made, and what they
// cannot see from names alone, read around it; a descriptor's place (no
// directory to read around) by its names alone.
func (k *call) judge(pl place) (pathguard.Name, string) {
	if pl.dir < 0 {
		return k.judgeName(pl, pl.full())
	}
	return k.decider().Judge(pl.at())
}

// resolved is where p leads now in the command's root, all its symlinks
// followed; ok is false if it leads nowhere.
func (k *call) resolved(p string) (string, bool) {
	root, e := k.rootFD()
	if e != 0 {
		return "", false
	}
	fd, err := openat2(root, p, &unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_IN_ROOT | unix.RESOLVE_NO_MAGICLINKS})
	if err != nil {
		return "", false
	}
	defer unix.Close(fd)
	real, err := k.gs.pathOf(fd)
	return real, err == nil
}

// mountPoint reports whether p's name is a mount point: the mount found
// there is not its directory's.
func mountPoint(p place) bool {
	var dir, at unix.Statx_t
	if unix.Statx(p.dir, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &dir) != nil {
		return false
	}
	if unix.Statx(p.dir, p.name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID, &at) != nil {
		return false
	}
	return dir.Mnt_id != at.Mnt_id
}
