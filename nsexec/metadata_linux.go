package nsexec

import (
	"bytes"
	"encoding/binary"
	"os"
	"runtime"
	"strconv"
	"strings"
	"unsafe"

	"github.com/srt-go/srt/seccomp"

	"golang.org/x/sys/unix"
)

// The metadata supervisor of the fallback: a notified chmod, chown,
// utimes or xattr call is never let through to the kernel, where another
// thread of the command could swap the path between our check and the
// kernel's walk. Its file is resolved once, as the command would resolve
// it (its cwd or dirfd; no /proc magic links), and pinned by an O_PATH
// descriptor; the file's real path is judged against the plan; and the
// change is made through that descriptor, on a thread holding no
// capability (srt may run as root; the command holds none), so the kernel
// checks ownership and permission as it would for the command.

// Limits of extended attributes (linux/limits.h).
const (
	xattrNameMax = 255
	xattrSizeMax = 65536
)

// isMetadata reports whether nr is a metadata call.
func isMetadata(nr int32) bool {
	_, ok := seccomp.MetaCallOf(nr)
	return ok
}

// metadata performs the notified metadata call req and returns its errno.
func (pol *ConnectPolicy) metadata(listener int, req *seccompNotif) unix.Errno {
	c, _ := seccomp.MetaCallOf(req.Nr)
	arg := func(i int) uint64 { return req.Args[i] }
	pid := int(req.Pid)
	target, errno := pol.metaTarget(listener, req, c)
	if errno != 0 {
		return errno
	}
	defer unix.Close(target)
	var st unix.Stat_t
	if err := unix.Fstat(target, &st); err != nil {
		return errnoOf(err)
	}
	self := "/proc/self/fd/" + strconv.Itoa(target)
	path, err := os.Readlink(self)
	if err != nil {
		return unix.EBADF
	}
	// A pipe, socket or anonymous inode ("pipe:[1]") is no file of the
	// host's tree; an unlinked file is judged where it was.
	path = strings.TrimSuffix(path, " (deleted)")
	if strings.HasPrefix(path, "/") && (pol.Writable == nil || !pol.Writable(path)) {
		return pol.deny(unix.EPERM, Event{Kind: "filesystem", Call: c.Op.String(), Target: path, Reason: "not writable here (allowWrite)"})
	}
	link := st.Mode&unix.S_IFMT == unix.S_IFLNK
	empty := []byte{0}
	switch c.Op {
	case seccomp.OpMode:
		if link {
			return unix.EOPNOTSUPP // what the kernel says for a symlink's mode
		}
		mode := uint32(arg(c.Rest)) & 0o7777
		return pol.capless(func() unix.Errno {
			_, _, e := unix.Syscall6(unix.SYS_FCHMODAT2, uintptr(target), uintptr(unsafe.Pointer(&empty[0])), uintptr(mode), unix.AT_EMPTY_PATH, 0, 0)
			if e == unix.ENOSYS || e == unix.EINVAL {
				e = errnoOf(unix.Fchmodat(unix.AT_FDCWD, self, mode, 0))
			}
			return e
		})
	case seccomp.OpOwner:
		uid, gid := int(int32(arg(c.Rest))), int(int32(arg(c.Rest+1)))
		return pol.capless(func() unix.Errno {
			return errnoOf(unix.Fchownat(target, "", uid, gid, unix.AT_EMPTY_PATH))
		})
	case seccomp.OpTimes, seccomp.OpTimeval, seccomp.OpUtimbuf:
		ts, errno := readTimes(pid, c.Op, uintptr(arg(c.Rest)))
		if errno != 0 {
			return errno
		}
		var p unsafe.Pointer
		if ts != nil {
			p = unsafe.Pointer(&ts[0])
		}
		return pol.capless(func() unix.Errno {
			_, _, e := unix.Syscall6(unix.SYS_UTIMENSAT, uintptr(target), uintptr(unsafe.Pointer(&empty[0])), uintptr(p), unix.AT_EMPTY_PATH, 0, 0)
			runtime.KeepAlive(ts)
			return e
		})
	case seccomp.OpSetXattr, seccomp.OpSetXattrAt, seccomp.OpRemoveXattr:
		if link {
			return unix.EPERM // no user attributes on symlinks; the others need capabilities
		}
		name, errno := readString(pid, uintptr(arg(c.Rest)), xattrNameMax+1)
		if errno != 0 {
			return errno
		}
		if c.Op == seccomp.OpRemoveXattr {
			return pol.capless(func() unix.Errno { return errnoOf(unix.Removexattr(self, name)) })
		}
		value, flags, errno := readXattrValue(pid, c, req)
		if errno != 0 {
			return errno
		}
		return pol.capless(func() unix.Errno { return errnoOf(unix.Setxattr(self, name, value, flags)) })
	}
	return unix.ENOSYS
}

// metaTarget opens, O_PATH, the file the call req names.
func (pol *ConnectPolicy) metaTarget(listener int, req *seccompNotif, c seccomp.MetaCall) (int, unix.Errno) {
	if c.Path < 0 {
		return pol.fdOf(listener, req, int(int32(req.Args[c.Fd])))
	}
	flags := 0
	if c.Flags >= 0 {
		flags = int(req.Args[c.Flags])
	}
	pathPtr := uintptr(req.Args[c.Path])
	var name string
	if pathPtr != 0 {
		var errno unix.Errno
		if name, errno = readString(int(req.Pid), pathPtr, unix.PathMax); errno != 0 {
			return -1, errno
		}
	}
	// The C library names a descriptor's file by /proc/self/fd/N (futimes,
	// fchmodat's emulation): in srt those names would be srt's own, so
	// they are taken for what they mean to the command. Other magic links
	// are refused by the walk below.
	if fd, ok := selfFD(name, int(req.Pid)); ok {
		return pol.fdOf(listener, req, fd)
	}
	// The descriptor the path starts from: the dirfd, or the cwd.
	var base int
	if c.Dir >= 0 && int32(req.Args[c.Dir]) != unix.AT_FDCWD {
		var errno unix.Errno
		if base, errno = pol.fdOf(listener, req, int(int32(req.Args[c.Dir]))); errno != 0 {
			return -1, errno
		}
	} else {
		var err error
		base, err = unix.Open(pol.Proc+"/"+strconv.Itoa(int(req.Pid))+"/cwd", unix.O_PATH|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		if err != nil || !stillWaiting(listener, req.ID) {
			if err == nil {
				unix.Close(base)
			}
			return -1, unix.ESRCH
		}
	}
	switch {
	case pathPtr == 0 && c.Op == seccomp.OpTimes && c.Dir >= 0 && int32(req.Args[c.Dir]) != unix.AT_FDCWD:
		return base, 0 // utimensat(fd, NULL, …): the descriptor itself
	case pathPtr == 0:
		unix.Close(base)
		return -1, unix.EFAULT
	case name == "" && flags&unix.AT_EMPTY_PATH != 0:
		return base, 0 // the dirfd (or the cwd) itself
	case name == "":
		unix.Close(base)
		return -1, unix.ENOENT
	}
	defer unix.Close(base)
	how := unix.OpenHow{Flags: unix.O_PATH | unix.O_CLOEXEC, Resolve: unix.RESOLVE_NO_MAGICLINKS}
	if !c.Follow || flags&unix.AT_SYMLINK_NOFOLLOW != 0 {
		how.Flags |= unix.O_NOFOLLOW
	}
	fd, err := openat2(base, name, &how)
	if err != nil {
		return -1, errnoOf(err)
	}
	return fd, 0
}

// selfFD reports whether name is /proc/self/fd/N (or thread-self's, or
// the caller's own pid's, or /dev/fd/N), and N.
func selfFD(name string, tid int) (int, bool) {
	fd, rest, _, ok := selfAlias(name, tid)
	return fd, ok && fd >= 0 && rest == ""
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

// capless runs f on a thread that holds no capability, so that the kernel
// judges the change as it would for the command (srt may be root): one of
// the guard's threads (guardthreads_linux.go).
func (pol *ConnectPolicy) capless(f func() unix.Errno) unix.Errno {
	errno := unix.EPERM
	guardThreads.run(func() { errno = f() })
	return errno
}
