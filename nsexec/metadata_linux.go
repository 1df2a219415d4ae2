package nsexec

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"unsafe"

	"github.com/srt-go/srt/pathguard"
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
	ch, e := k.readChange(c)
	if e != 0 {
		return e
	}
	if e := k.mayChange(&ch, pl, target, &st); e != 0 {
		return e
	}
	return ch.apply(target, &st)
}

// metaChange is the change a metadata call asks, read from the caller
// once, its ids mapped to srt's.
type metaChange struct {
	op       seccomp.MetaOp
	mode     uint32          // OpMode
	uid, gid int             // OpOwner (-1: unchanged)
	times    []unix.Timespec // the utimes ops (nil: now)
	name     string          // the xattr ops
	value    []byte
	flags    int
	// idErr is an id with no mapping in the caller's user namespace
	// (EINVAL), said once the file is known to be writable.
	idErr unix.Errno
}

// readChange reads the change call c asks for.
func (k *call) readChange(c seccomp.MetaCall) (metaChange, unix.Errno) {
	req, pid := k.req, k.pid
	arg := func(i int) uint64 { return req.Args[i] }
	ch := metaChange{op: c.Op}
	var e unix.Errno
	switch c.Op {
	case seccomp.OpMode:
		ch.mode = uint32(arg(c.Rest)) & 0o7777
	case seccomp.OpOwner:
		maps, e := k.idMaps()
		if e != 0 {
			return ch, e
		}
		var e1, e2 unix.Errno
		ch.uid, e1 = maps.uid.toHost(int(int32(arg(c.Rest))))
		ch.gid, e2 = maps.gid.toHost(int(int32(arg(c.Rest + 1))))
		ch.idErr = max(e1, e2)
	case seccomp.OpTimes, seccomp.OpTimeval, seccomp.OpUtimbuf:
		ch.times, e = readTimes(pid, c.Op, uintptr(arg(c.Rest)))
	case seccomp.OpSetXattr, seccomp.OpSetXattrAt, seccomp.OpRemoveXattr:
		if ch.name, e = readString(pid, uintptr(arg(c.Rest)), xattrNameMax+1); e == unix.ENAMETOOLONG {
			e = unix.ERANGE // as the kernel says of a name too long
		}
		if e != 0 || c.Op == seccomp.OpRemoveXattr {
			break
		}
		if ch.value, ch.flags, e = readXattrValue(pid, c, req); e == 0 && pathguard.IsACLName(ch.name) {
			maps, e2 := k.idMaps()
			if e2 != 0 {
				return ch, e2
			}
			ch.value, ch.idErr = maps.acl(ch.value)
		}
	}
	return ch, e
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
	// fchmod, fchown, f*xattr and futimens take a descriptor open for
	// something: an O_PATH one is EBADF, as the kernel says.
	opened := func(fd int) (place, int, unix.Stat_t, unix.Errno) {
		pl, e := k.ofDescriptor(fd)
		if e != 0 {
			return fail(e)
		}
		if pl.fileFlags&unix.O_PATH != 0 {
			pl.close()
			return fail(unix.EBADF)
		}
		return done(pl)
	}
	if c.Path < 0 {
		return opened(int(int32(req.Args[c.Fd])))
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
		return opened(dir) // utimensat(fd, NULL, …), futimesat: the descriptor itself
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
		fd, err := k.openAt(pl, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
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
			if k.pol.Guard != nil {
				if n, rule := k.judge(pl); pathguard.Blocked(n) {
					// Through a protected name that is a symlink, as a
					// write through it (open).
					full := pl.full()
					pl.close()
					return fail(k.deny(unix.EROFS, c.Op.String(), full, rule, n))
				}
			}
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
func (k *call) mayChange(ch *metaChange, pl place, target int, st *unix.Stat_t) unix.Errno {
	op, full := ch.op.String(), pl.full()
	switch {
	case !strings.HasPrefix(full, "/") && !treeKind(st):
		return 0 // a pipe, socket or anonymous inode: no file of the tree
	case !strings.HasPrefix(full, "/"):
		return unix.EACCES // a file of a tree, with no path to judge
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
	n, rule := k.judgeAt(named)
	change := ch.asChange()
	switch v := k.decider().Change(full, n, rule, &change, uint32(st.Mode)&0o7777, st.Uid, st.Gid); {
	case v.KernelFirst && k.policyLater(full) && readOnlyFD(target):
		return unix.EROFS // a denyWrite file of the launch: its mount says so first
	case v.Errno == pathguard.EROFS:
		return k.pol.deny(unix.EROFS, Event{Kind: "filesystem", Call: op, Target: full, Reason: v.Reason})
	case v.Refused():
		return k.pol.deny(unix.EACCES, Event{Kind: "filesystem", Call: op, Target: full, Reason: v.Reason})
	}
	ch.mode = change.Mode // narrowed for a repository's config or hooks directory
	if pl.name == "" && !pl.writesAlready() {
		if e := k.writableHere(pl, st); e != 0 {
			return e
		}
	}
	return k.linkedElsewhere(op, st, full, pl.unlinked)
}

// asChange is ch as pathguard judges it.
func (ch metaChange) asChange() pathguard.Change {
	c := pathguard.Change{Mode: ch.mode, UID: ch.uid, GID: ch.gid, Unmapped: ch.idErr != 0, Name: ch.name, Value: ch.value}
	switch ch.op {
	case seccomp.OpMode:
		c.Op = pathguard.ChangeMode
	case seccomp.OpOwner:
		c.Op = pathguard.ChangeOwner
	case seccomp.OpTimes, seccomp.OpTimeval, seccomp.OpUtimbuf:
		c.Op = pathguard.ChangeTimes
	case seccomp.OpSetXattr, seccomp.OpSetXattrAt:
		c.Op = pathguard.ChangeXattr
	case seccomp.OpRemoveXattr:
		c.Op = pathguard.RemoveXattr
	}
	return c
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

// acl maps the ids of a POSIX ACL's value (struct posix_acl_xattr_header,
// then entries of tag u16, perm u16, id u32) to srt's: a named user's by
// the uid map, a named group's by the gid map; other entries carry no id.
// A value it cannot read goes to the kernel as it is, to be refused there.
func (m *idMaps) acl(value []byte) ([]byte, unix.Errno) {
	const (
		header    = 4
		entry     = 8
		aclUser   = 0x02
		aclGroup  = 0x08
		aclNoIDTo = ^uint32(0)
	)
	if len(value) < header || (len(value)-header)%entry != 0 {
		return value, 0
	}
	out := slices.Clone(value)
	le := binary.LittleEndian // the xattr's own byte order
	for off := header; off < len(out); off += entry {
		var ids idMap
		switch le.Uint16(out[off:]) {
		case aclUser:
			ids = m.uid
		case aclGroup:
			ids = m.gid
		default:
			continue
		}
		id := le.Uint32(out[off+4:])
		if id == aclNoIDTo {
			return nil, unix.EINVAL
		}
		host, e := ids.toHost(int(id))
		if e != 0 {
			return nil, e
		}
		le.PutUint32(out[off+4:], uint32(host))
	}
	return out, 0
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

// apply makes the change ch to the file st, pinned by the descriptor
// target (O_PATH, or a descriptor of the command's), on the calling
// thread.
func (ch metaChange) apply(target int, st *unix.Stat_t) unix.Errno {
	if ch.idErr != 0 {
		if readOnlyFD(target) {
			return unix.EROFS // the kernel looks at the mount first
		}
		return ch.idErr
	}
	self := "/proc/self/fd/" + strconv.Itoa(target)
	link := st.Mode&unix.S_IFMT == unix.S_IFLNK
	empty := []byte{0}
	switch ch.op {
	case seccomp.OpMode:
		if link {
			return unix.EOPNOTSUPP // what the kernel says for a symlink's mode
		}
		_, _, e := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(target), uintptr(unsafe.Pointer(&empty[0])), uintptr(ch.mode), unix.AT_EMPTY_PATH, 0, 0)
		if e == unix.ENOSYS || e == unix.EINVAL {
			e = errnoOf(unix.Fchmodat(unix.AT_FDCWD, self, ch.mode, 0))
		}
		return e
	case seccomp.OpOwner:
		return errnoOf(unix.Fchownat(target, "", ch.uid, ch.gid, unix.AT_EMPTY_PATH))
	case seccomp.OpTimes, seccomp.OpTimeval, seccomp.OpUtimbuf:
		var p unsafe.Pointer
		if ch.times != nil {
			p = unsafe.Pointer(&ch.times[0])
		}
		_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(target), uintptr(unsafe.Pointer(&empty[0])), uintptr(p), unix.AT_EMPTY_PATH, 0, 0)
		runtime.KeepAlive(ch.times)
		return e
	case seccomp.OpSetXattr, seccomp.OpSetXattrAt, seccomp.OpRemoveXattr:
		if link {
			return unix.EPERM // no user attributes on symlinks; the others need capabilities
		}
		if ch.op == seccomp.OpRemoveXattr {
			return errnoOf(unix.Removexattr(self, ch.name))
		}
		return errnoOf(unix.Setxattr(self, ch.name, ch.value, ch.flags))
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
		got, err := readMemory(pid, addr, buf)
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
	got, err := readMemory(pid, addr, buf)
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
