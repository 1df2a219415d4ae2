package nsexec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"github.com/srt-go/srt/policy"
	"github.com/srt-go/srt/seccomp"

	"golang.org/x/sys/unix"
)

// Metadata calls: Landlock has no right for a file's mode, owner, times
// or extended attributes, and the launch's mounts protect only what
// exists at launch, so the filter sends every chmod, chown, utimes and
// xattr call to srt whenever the path guard runs (and always in the
// fallback). Like the guard's other calls, one is never let through to
// the kernel: another thread of the command could swap the path between
// our check and the kernel's walk. Its file is resolved once, as the
// command would resolve it (its root, its cwd or dirfd; no magic links),
// and pinned by an O_PATH descriptor; the file is judged where it is, as
// a write to it would be (a protected name, a deny entry that applies
// later, a hard link made before the run, in the fallback allowWrite);
// and the change is made through that descriptor on the serving thread,
// which holds no capability (srt may run as root; the command holds
// none), so the kernel checks ownership, permission and read-only mounts
// as it would for the command.

// Limits of extended attributes (linux/limits.h).
const (
	xattrNameMax = 255
	xattrSizeMax = 65536
)

// metadata performs the metadata call c and returns its errno.
func (k *call) metadata(c seccomp.MetaCall) unix.Errno {
	pl, target, st, e := k.metaTarget(c)
	if e != 0 {
		return e
	}
	defer pl.close()
	if target != pl.dir {
		defer unix.Close(target)
	}
	if e := k.mayChange(c, pl, target, &st); e != 0 {
		return e
	}
	if c.Op == seccomp.OpOwner {
		return k.chown(target, c)
	}
	return changeMeta(target, &st, c, k.req)
}

// metaTarget resolves the file call c names: the place it was found at
// (a descriptor's has no name), an O_PATH descriptor of the file itself
// (pl.dir, for a descriptor or a directory named by "."), and its stat.
func (k *call) metaTarget(c seccomp.MetaCall) (pl place, target int, st unix.Stat_t, e unix.Errno) {
	req := k.req
	fail := func(e unix.Errno) (place, int, unix.Stat_t, unix.Errno) {
		return place{dir: -1}, -1, unix.Stat_t{}, e
	}
	done := func(pl place) (place, int, unix.Stat_t, unix.Errno) {
		var st unix.Stat_t
		if err := unix.Fstat(pl.dir, &st); err != nil {
			pl.close()
			return fail(errnoOf(err))
		}
		return pl, pl.dir, st, 0
	}
	if c.Path < 0 {
		if pl, e = k.ofDescriptor(int(int32(req.Args[c.Fd]))); e != 0 {
			return fail(e)
		}
		return done(pl)
	}
	flags := 0
	if c.Flags >= 0 {
		flags = int(uint32(req.Args[c.Flags]))
		if flags&^(unix.AT_SYMLINK_NOFOLLOW|unix.AT_EMPTY_PATH) != 0 {
			return fail(unix.EINVAL) // as the kernel says for flags it does not take
		}
	}
	dir := unix.AT_FDCWD
	if c.Dir >= 0 {
		dir = int(int32(req.Args[c.Dir]))
	}
	ptr := uintptr(req.Args[c.Path])
	var name string
	switch {
	case ptr == 0 && (c.Op == seccomp.OpTimes || c.Op == seccomp.OpTimeval) && dir != unix.AT_FDCWD:
		if flags != 0 {
			return fail(unix.EINVAL)
		}
		name = "" // utimensat(fd, NULL, …), futimesat: the descriptor itself
	case ptr == 0:
		return fail(unix.EFAULT)
	default:
		if name, e = readString(k.pid, ptr, unix.PathMax); e != 0 {
			return fail(e)
		}
		if name == "" && flags&unix.AT_EMPTY_PATH == 0 {
			return fail(unix.ENOENT)
		}
	}
	if name == "" {
		if dir == unix.AT_FDCWD {
			name = "." // the cwd itself
		} else {
			if pl, e = k.ofDescriptor(dir); e != 0 {
				return fail(e)
			}
			return done(pl)
		}
	}
	follow := c.Follow && flags&unix.AT_SYMLINK_NOFOLLOW == 0
	pl, e = k.at(dir, name)
	for hops := 0; ; hops++ {
		switch {
		case e != 0:
			return fail(e)
		case hops > maxSymlinks:
			pl.close()
			return fail(unix.ELOOP)
		case pl.proc:
			// srt's rights over the sandbox's processes exceed the
			// command's, and the kernel refuses these changes to procfs
			// files (a descriptor's /proc/self/fd/N is the descriptor).
			pl.close()
			return fail(unix.EPERM)
		case pl.name == "" || pl.name == ".":
			return done(pl) // a descriptor of the command's, or a directory
		}
		// The file is pinned first and then looked at, so what is judged
		// is what is changed, whatever replaces the name meanwhile.
		fd, err := unix.Openat(pl.dir, pl.name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			pl.close()
			return fail(errnoOf(err))
		}
		if err := unix.Fstat(fd, &st); err != nil {
			unix.Close(fd)
			pl.close()
			return fail(errnoOf(err))
		}
		if st.Mode&unix.S_IFMT == unix.S_IFLNK && (follow || pl.slash) {
			unix.Close(fd)
			pl, e = k.followLink(pl)
			continue
		}
		if pl.slash && st.Mode&unix.S_IFMT != unix.S_IFDIR {
			unix.Close(fd)
			pl.close()
			return fail(unix.ENOTDIR)
		}
		return pl, fd, st, 0
	}
}

// mayChange refuses (reported) changing the metadata of the file st,
// pinned by target, found at pl, where a write to it would be refused.
func (k *call) mayChange(c seccomp.MetaCall, pl place, target int, st *unix.Stat_t) unix.Errno {
	op, full := c.Op.String(), pl.full()
	switch {
	case !strings.HasPrefix(full, "/"):
		return 0 // a pipe, socket or anonymous inode: no file of the tree
	case pl.unlinked && st.Nlink == 0:
		return 0 // a file with no name left (a memfd, O_TMPFILE, a deleted one): no host file
	case k.pol.Writable != nil && !k.pol.Writable(full):
		// The fallback's devices may be written, not changed: they are
		// the host's own.
		return k.notWritable(op, full)
	case k.pol.Guard == nil:
		return 0 // filesystem.disabled in the fallback: allowWrite alone
	}
	named := pl
	if named.name == "." {
		named.name = "" // a directory: judged by its own name
	}
	if n, rule := k.judgeAt(named); blocked(n) && !(n == policy.GitConfig && configMetaSafe(c, st, k.req)) {
		return k.deny(unix.EROFS, op, full, rule, n)
	}
	if _, denied := k.pol.Guard.Later(full); denied && readOnlyFD(target) {
		return unix.EROFS // a denyWrite file of the launch: its mount says so first
	}
	if e := k.deniedLater(op, full); e != 0 {
		return e
	}
	return k.linkedElsewhere(op, st, full, pl.unlinked)
}

// configMetaSafe says whether the change req asks (call c) to a
// repository's config, the file st, leaves it as safe as it was: its
// times, or a mode that lets no one else write it (git probes whether
// the filesystem keeps modes by flipping the config's owner-execute bit).
// Its owner and extended attributes (an ACL could let others write it)
// stay as they are.
func configMetaSafe(c seccomp.MetaCall, st *unix.Stat_t, req *seccompNotif) bool {
	switch c.Op {
	case seccomp.OpTimes, seccomp.OpTimeval, seccomp.OpUtimbuf:
		return true
	case seccomp.OpMode:
		mode := uint32(req.Args[c.Rest]) & 0o7777
		return mode&^uint32(st.Mode)&0o022 == 0
	}
	return false
}

// chown changes the owner of the file target as fchownat(target, "",
// uid, gid, AT_EMPTY_PATH) would in the caller's user namespace: its ids
// are mapped to srt's first, as the kernel maps a caller's (an id with
// no mapping there is EINVAL).
func (k *call) chown(target int, c seccomp.MetaCall) unix.Errno {
	uid, gid := int(int32(k.req.Args[c.Rest])), int(int32(k.req.Args[c.Rest+1]))
	maps, e := k.idMaps()
	if e != 0 {
		return e
	}
	if uid, e = maps.uid.toHost(uid); e != 0 {
		return e
	}
	if gid, e = maps.gid.toHost(gid); e != 0 {
		return e
	}
	return errnoOf(unix.Fchownat(target, "", uid, gid, unix.AT_EMPTY_PATH))
}

// idMaps are a user namespace's uid and gid maps, as srt sees them.
type idMaps struct{ uid, gid idMap }

// idMap is one of them: lines of (first id inside, first outside, count).
type idMap [][3]uint32

// toHost maps id (-1: leave as is) from inside to srt's namespace.
func (m idMap) toHost(id int) (int, unix.Errno) {
	if id == -1 {
		return -1, 0
	}
	for _, l := range m {
		if uint32(id) >= l[0] && uint64(uint32(id)) < uint64(l[0])+uint64(l[2]) {
			return int(l[1] + (uint32(id) - l[0])), 0
		}
	}
	return 0, unix.EINVAL
}

// parseIDMap reads /proc/<pid>/uid_map's or gid_map's text.
func parseIDMap(text string) (idMap, error) {
	var m idMap
	for _, line := range strings.Split(strings.TrimSpace(text), "\n") {
		f := strings.Fields(line)
		if len(f) != 3 {
			return nil, fmt.Errorf("bad id map line %q", line)
		}
		var l [3]uint32
		for i, s := range f {
			v, err := strconv.ParseUint(s, 10, 32)
			if err != nil {
				return nil, err
			}
			l[i] = uint32(v)
		}
		m = append(m, l)
	}
	return m, nil
}

// idMaps are the calling process's id maps: read once per sandbox when
// every process of it shares one user namespace, else per call.
func (k *call) idMaps() (*idMaps, unix.Errno) {
	if k.gs.ids != nil && !k.pol.NestedNamespaces {
		return k.gs.ids, 0
	}
	var maps idMaps
	for _, f := range []struct {
		name string
		m    *idMap
	}{{"uid_map", &maps.uid}, {"gid_map", &maps.gid}} {
		data, err := os.ReadFile(k.pol.Proc + "/" + strconv.Itoa(k.pid) + "/" + f.name)
		if err != nil || !stillWaiting(k.listener, k.req.ID) {
			return nil, unix.ESRCH
		}
		if *f.m, err = parseIDMap(string(data)); err != nil {
			return nil, unix.EINVAL
		}
	}
	if !k.pol.NestedNamespaces {
		k.gs.ids = &maps
	}
	return &maps, 0
}

// changeMeta makes the change req asks (call c) to the file st, pinned by
// the descriptor target (O_PATH, or a descriptor of the command's), on
// the calling thread.
func changeMeta(target int, st *unix.Stat_t, c seccomp.MetaCall, req *seccompNotif) unix.Errno {
	arg := func(i int) uint64 { return req.Args[i] }
	pid := int(req.Pid)
	self := "/proc/self/fd/" + strconv.Itoa(target)
	link := st.Mode&unix.S_IFMT == unix.S_IFLNK
	empty := []byte{0}
	switch c.Op {
	case seccomp.OpMode:
		if link {
			return unix.EOPNOTSUPP // what the kernel says for a symlink's mode
		}
		mode := uint32(arg(c.Rest)) & 0o7777
		_, _, e := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(target), uintptr(unsafe.Pointer(&empty[0])), uintptr(mode), unix.AT_EMPTY_PATH, 0, 0)
		if e == unix.ENOSYS || e == unix.EINVAL {
			e = errnoOf(unix.Fchmodat(unix.AT_FDCWD, self, mode, 0))
		}
		return e
	case seccomp.OpTimes, seccomp.OpTimeval, seccomp.OpUtimbuf:
		ts, errno := readTimes(pid, c.Op, uintptr(arg(c.Rest)))
		if errno != 0 {
			return errno
		}
		var p unsafe.Pointer
		if ts != nil {
			p = unsafe.Pointer(&ts[0])
		}
		_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(target), uintptr(unsafe.Pointer(&empty[0])), uintptr(p), unix.AT_EMPTY_PATH, 0, 0)
		runtime.KeepAlive(ts)
		return e
	case seccomp.OpSetXattr, seccomp.OpSetXattrAt, seccomp.OpRemoveXattr:
		if link {
			return unix.EPERM // no user attributes on symlinks; the others need capabilities
		}
		name, errno := readString(pid, uintptr(arg(c.Rest)), xattrNameMax+1)
		if errno != 0 {
			return errno
		}
		if c.Op == seccomp.OpRemoveXattr {
			return errnoOf(unix.Removexattr(self, name))
		}
		value, flags, errno := readXattrValue(pid, c, req)
		if errno != 0 {
			return errno
		}
		return errnoOf(unix.Setxattr(self, name, value, flags))
	}
	return unix.ENOSYS
}

// readString copies a NUL-terminated string of at most max bytes, its
// NUL included, from process pid. It reads a short first piece (most
// paths end in it), then the rest a page at a time: the string may end
// just before an unmapped page, which a read must not reach.
func readString(pid int, addr uintptr, max int) (string, unix.Errno) {
	if addr == 0 {
		return "", unix.EFAULT
	}
	var first [256]byte
	var out []byte
	page := uintptr(os.Getpagesize())
	for want := len(first); len(out) < max; want = int(page) {
		n := min(want, int(page-addr%page), max-len(out))
		var buf []byte
		if want == len(first) {
			buf = first[:n]
		} else {
			buf = make([]byte, n)
		}
		got, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: uint64(n)}}, []unix.RemoteIovec{{Base: addr, Len: n}}, 0)
		if err != nil || got == 0 {
			return "", unix.EFAULT
		}
		if i := bytes.IndexByte(buf[:got], 0); i >= 0 {
			return string(append(out, buf[:i]...)), 0
		}
		out = append(out, buf[:got]...)
		addr += uintptr(got)
	}
	return "", unix.ENAMETOOLONG
}

// readBytes copies n bytes from process pid.
func readBytes(pid int, addr uintptr, n int) ([]byte, unix.Errno) {
	if n == 0 {
		return nil, 0
	}
	if addr == 0 {
		return nil, unix.EFAULT
	}
	buf := make([]byte, n)
	got, err := unix.ProcessVMReadv(pid, []unix.Iovec{{Base: &buf[0], Len: uint64(n)}}, []unix.RemoteIovec{{Base: addr, Len: n}}, 0)
	if err != nil || got != n {
		return nil, unix.EFAULT
	}
	return buf, 0
}

// readTimes reads a call's times as utimensat's two timespecs; nil means
// now, as a NULL pointer does.
func readTimes(pid int, op seccomp.MetaOp, addr uintptr) ([]unix.Timespec, unix.Errno) {
	if addr == 0 {
		return nil, 0
	}
	le := binary.NativeEndian
	switch op {
	case seccomp.OpTimes:
		b, errno := readBytes(pid, addr, 32)
		if errno != 0 {
			return nil, errno
		}
		return []unix.Timespec{{Sec: int64(le.Uint64(b[0:])), Nsec: int64(le.Uint64(b[8:]))},
			{Sec: int64(le.Uint64(b[16:])), Nsec: int64(le.Uint64(b[24:]))}}, 0
	case seccomp.OpTimeval:
		b, errno := readBytes(pid, addr, 32)
		if errno != 0 {
			return nil, errno
		}
		usec := func(v uint64) int64 {
			if int64(v) < 0 || int64(v) >= 1e6 {
				return -1 // invalid: the kernel says EINVAL
			}
			return int64(v) * 1000
		}
		ts := []unix.Timespec{{Sec: int64(le.Uint64(b[0:])), Nsec: usec(le.Uint64(b[8:]))},
			{Sec: int64(le.Uint64(b[16:])), Nsec: usec(le.Uint64(b[24:]))}}
		if ts[0].Nsec < 0 || ts[1].Nsec < 0 {
			return nil, unix.EINVAL
		}
		return ts, 0
	case seccomp.OpUtimbuf:
		b, errno := readBytes(pid, addr, 16)
		if errno != 0 {
			return nil, errno
		}
		return []unix.Timespec{{Sec: int64(le.Uint64(b[0:]))}, {Sec: int64(le.Uint64(b[8:]))}}, 0
	}
	return nil, unix.EINVAL
}

// readXattrValue reads the value and flags of a setxattr call.
func readXattrValue(pid int, c seccomp.MetaCall, req *seccompNotif) ([]byte, int, unix.Errno) {
	if c.Op == seccomp.OpSetXattrAt {
		// struct xattr_args { u64 value; u32 size; u32 flags; }
		if req.Args[c.Rest+2] < 16 {
			return nil, 0, unix.EINVAL
		}
		b, errno := readBytes(int(req.Pid), uintptr(req.Args[c.Rest+1]), 16)
		if errno != 0 {
			return nil, 0, errno
		}
		le := binary.NativeEndian
		size := int(le.Uint32(b[8:]))
		if size > xattrSizeMax {
			return nil, 0, unix.E2BIG
		}
		value, errno := readBytes(int(req.Pid), uintptr(le.Uint64(b[0:])), size)
		return value, int(le.Uint32(b[12:])), errno
	}
	size := int(req.Args[c.Rest+2])
	if size > xattrSizeMax {
		return nil, 0, unix.E2BIG
	}
	value, errno := readBytes(int(req.Pid), uintptr(req.Args[c.Rest+1]), size)
	return value, int(int32(req.Args[c.Rest+3])), errno
}
