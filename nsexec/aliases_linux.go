package nsexec

import (
	"os"
	"path"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/srt-go/srt/policy"
)

// Under allowNestedUserNamespaces a process may make a mount namespace of
// its own and bind a directory or file at another name: a .vscode bound
// as alias, a .bashrc onto foo, a denyWrite file elsewhere. The guard
// judges a call by its path; there the protected name, or the deny
// entry's path, is gone. So for a process in a mount namespace other than
// the sandbox's, the guard judges the path as the sandbox names what
// the process reaches there (sourcePath): the mount the name lies on
// (or is, for a file bound onto it) has a root within its filesystem
// (the caller's mountinfo), and the sandbox's own mounts say where that
// filesystem's directories are (the init's mountinfo). Every rule then
// applies — names, deny entries, a repository's kept hooks. A filesystem
// the sandbox does not mount (a tmpfs of the caller's own) holds nothing
// of the host's, and is judged by the caller's path.

// sourcePath is where the sandbox's own mounts put what the caller
// reaches at name in the directory fd (or, with name "", the file fd
// itself: a descriptor of the caller's). ok is false when that cannot be
// told, which refuses the call; the path is "" when the caller has the
// sandbox's own view, or what it reaches is on no filesystem the
// sandbox mounts. Paths are compared as srt reads them (a descriptor's
// path, the caller's root's): the caller's mountinfo names its mount
// points from its root, which may be a chroot.
func (k *call) sourcePath(fd int, name string) (src string, mnt uint64, ok bool) {
	if k.view == (viewID{}) {
		v, ok := k.viewOf(k.pid)
		if !ok {
			return "", 0, false
		}
		k.view = v
	}
	base, ok := k.baseView()
	if !ok {
		return "", 0, false
	}
	if k.view == base {
		return "", 0, true
	}
	// fd holds its mount: its id is no other's while the guard looks.
	// The caller's table is read after, each call (mount ids are given
	// again once free, and a mountinfo file does not reliably say it
	// changed); the sandbox's own, once (the command cannot mount there).
	var dir, at unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &dir) != nil {
		return "", 0, false
	}
	mnt, ok = uniqueMount(fd)
	if !ok {
		return "", 0, false
	}
	if name != "." && name != "" && unix.Statx(fd, name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID, &at) == nil && at.Mnt_id != dir.Mnt_id {
		// A mount's root at the name itself (a file bound onto it): the
		// guard pins it, and judges where the sandbox has its root; what
		// the call then opens or changes there must be on that very
		// mount (verified by its unique id, which no other mount is
		// ever given), else another thread swapped it meanwhile.
		pin, err := unix.Openat(fd, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err != nil {
			return "", 0, false
		}
		defer unix.Close(pin)
		var p unix.Statx_t
		if unix.Statx(pin, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &p) != nil {
			return "", 0, false
		}
		if mnt, ok = uniqueMount(pin); !ok {
			return "", 0, false
		}
		fd, name, dir = pin, "", p
	}
	mounts, ok := readMounts(k.pol.Proc, k.pid)
	if !ok {
		return "", 0, false
	}
	if k.gs.baseMounts == nil {
		t, ok := readMounts(k.pol.Proc, int(k.pol.initPid.Load()))
		if !ok {
			return "", 0, false
		}
		k.gs.baseMounts = t
	}
	sandbox := k.gs.baseMounts
	here, err := k.gs.pathOf(fd)
	if err != nil {
		return "", 0, false
	}
	var point string
	m, ok := mounts[dir.Mnt_id]
	switch {
	case ok:
		// Its point is named from the caller's root.
		root, e := k.rootFD()
		if e != 0 {
			return "", 0, false
		}
		rootPath, err := k.gs.pathOf(root)
		if err != nil {
			return "", 0, false
		}
		point = path.Join(rootPath, m.point)
	case k.view.ns == base.ns:
		// A chroot in the sandbox's own namespace: the caller's table
		// leaves out the mount that holds its root, which is one of
		// the sandbox's, named from the sandbox's root.
		if m, ok = sandbox[dir.Mnt_id]; !ok {
			return "", 0, false
		}
		point = m.point
	default:
		return "", 0, false
	}
	if !policy.Under(here, point) {
		return "", 0, false
	}
	rest := strings.TrimPrefix(strings.TrimPrefix(here, point), "/")
	if name != "." && name != "" {
		rest = path.Join(rest, name)
	}
	// The sandbox's mount of the same filesystem whose root holds m's,
	// the most specific: where it is, and the rest of m's root beneath.
	best, bestRoot := "", -1
	for _, s := range sandbox {
		if s.dev == m.dev && policy.Under(m.root, s.root) && len(s.root) > bestRoot {
			best, bestRoot = path.Join(s.point, strings.TrimPrefix(m.root, s.root)), len(s.root)
		}
	}
	if bestRoot < 0 {
		// A filesystem the sandbox does not mount: one of the caller's
		// own making. A fresh tmpfs (or the like) holds nothing of the
		// host's; an overlay's layers, or anything else, may show the
		// host's files, which cannot be named where the sandbox has
		// them.
		if !freshFS[m.fstype] {
			return "", 0, false
		}
		return "", mnt, true
	}
	return path.Join(best, rest), mnt, true
}

// uniqueMount is the unique id of the mount fd lies on (no other mount
// is ever given it).
func uniqueMount(fd int) (uint64, bool) {
	var x unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID_UNIQUE, &x) != nil || x.Mask&unix.STATX_MNT_ID_UNIQUE == 0 {
		return 0, false
	}
	return x.Mnt_id, true
}

// openAt opens pl's name for the guard with flags (O_NOFOLLOW and
// O_CLOEXEC added by the caller) and mode. For a caller with its own
// view (pl.mnt set), the file opened must lie on the mount the guard
// judged: a mount another thread puts at the name after the judge would
// otherwise be crossed. O_TRUNC waits until that is known.
func (k *call) openAt(pl place, flags int, mode uint32) (int, error) {
	if pl.mnt == 0 {
		return unix.Openat(pl.dir, pl.name, flags, mode)
	}
	fd, err := unix.Openat(pl.dir, pl.name, flags&^unix.O_TRUNC, mode)
	if err != nil {
		return -1, err
	}
	if id, ok := uniqueMount(fd); !ok || id != pl.mnt {
		unix.Close(fd)
		return -1, unix.EACCES
	}
	if flags&unix.O_TRUNC != 0 && flags&unix.O_ACCMODE != unix.O_RDONLY {
		var st unix.Stat_t
		if unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFREG {
			if err := unix.Ftruncate(fd, 0); err != nil {
				unix.Close(fd)
				return -1, err
			}
		}
	}
	return fd, nil
}

// viewID is how a process sees the tree: its mount namespace and its
// root directory (chroot, pivot_root), by inode. A process with the
// sandbox's view names everything as the sandbox does.
type viewID struct{ ns, rootDev, rootIno uint64 }

// viewOf is pid's view.
func (k *call) viewOf(pid int) (viewID, bool) {
	var ns, root unix.Stat_t
	p := k.pol.Proc + "/" + strconv.Itoa(pid)
	if unix.Stat(p+"/ns/mnt", &ns) != nil || unix.Stat(p+"/root", &root) != nil {
		return viewID{}, false
	}
	return viewID{ns.Ino, root.Dev, root.Ino}, true
}

// baseView is the sandbox's own view (its init's), once known.
func (k *call) baseView() (viewID, bool) {
	if k.gs.baseView != (viewID{}) {
		return k.gs.baseView, true
	}
	init := int(k.pol.initPid.Load())
	if init <= 0 {
		return viewID{}, false
	}
	v, ok := k.viewOf(init)
	if ok {
		k.gs.baseView = v
	}
	return v, ok
}

// mountEntry is one mount: its filesystem (major:minor) and its type,
// its root (the path of its top within that filesystem) and its point
// (where it is, in the reading process's root).
type mountEntry struct{ dev, root, point, fstype string }

// freshFS are the filesystem types a process makes empty and of its own
// (a new instance holds nothing of the host's).
var freshFS = map[string]bool{"tmpfs": true, "ramfs": true, "devpts": true, "mqueue": true, "sysfs": true, "cgroup2": true, "cgroup": true}

// readMounts reads the mounts pid sees, by id.
func readMounts(proc string, pid int) (map[uint64]mountEntry, bool) {
	if pid <= 0 {
		return nil, false
	}
	data, err := os.ReadFile(proc + "/" + strconv.Itoa(pid) + "/mountinfo")
	if err != nil {
		return nil, false
	}
	return parseMountinfo(string(data)), true
}

// parseMountinfo reads a mountinfo file's lines: "id parent major:minor
// root point options …", fields split at single spaces (the kernel
// escapes a space, tab, newline and backslash in a path, and nothing
// else: a \v or \u00a0 in a name is the name's).
func parseMountinfo(data string) map[uint64]mountEntry {
	out := map[uint64]mountEntry{}
	for _, line := range strings.Split(data, "\n") {
		fields := strings.Split(line, " ")
		if len(fields) < 5 {
			continue
		}
		id, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		e := mountEntry{dev: fields[2], root: unescapeMount(fields[3]), point: unescapeMount(fields[4])}
		for i := 5; i+1 < len(fields); i++ {
			if fields[i] == "-" {
				e.fstype = fields[i+1]
				break
			}
		}
		out[id] = e
	}
	return out
}

// unescapeMount reads mountinfo's octal escapes (\040 for a space, \011,
// \012, \134).
func unescapeMount(s string) string {
	if !strings.Contains(s, `\`) {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+3 < len(s) {
			if v, err := strconv.ParseUint(s[i+1:i+4], 8, 8); err == nil {
				b.WriteByte(byte(v))
				i += 3
				continue
			}
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
