package nsexec

import (
	"io"
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
func (k *call) sourcePath(fd int, name string) (string, bool) {
	if k.view == (viewID{}) {
		v, ok := k.viewOf(k.pid)
		if !ok {
			return "", false
		}
		k.view = v
	}
	base, ok := k.baseView()
	if !ok {
		return "", false
	}
	if k.view == base {
		return "", true
	}
	mounts, ok := k.gs.mountsOf(&k.gs.mounts, k.pol.Proc, k.pid, k.view)
	if !ok {
		return "", false
	}
	sandbox, ok := k.gs.mountsOf(&k.gs.baseMounts, k.pol.Proc, int(k.pol.initPid.Load()), base)
	if !ok {
		return "", false
	}
	var dir, at unix.Statx_t
	if unix.Statx(fd, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &dir) != nil {
		return "", false
	}
	id, rest := dir.Mnt_id, ""
	if name != "." && name != "" && unix.Statx(fd, name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID, &at) == nil && at.Mnt_id != dir.Mnt_id {
		id = at.Mnt_id // a mount's root at the name itself (a file bound onto it)
	} else {
		m, ok := mounts.byID[id]
		if !ok {
			return "", false
		}
		root, e := k.rootFD()
		if e != 0 {
			return "", false
		}
		rootPath, err := k.gs.pathOf(root)
		if err != nil {
			return "", false
		}
		here, err := k.gs.pathOf(fd)
		if err != nil {
			return "", false
		}
		point := path.Join(rootPath, m.point)
		if !policy.Under(here, point) {
			return "", false
		}
		rest = strings.TrimPrefix(strings.TrimPrefix(here, point), "/")
		if name != "." && name != "" {
			rest = path.Join(rest, name)
		}
	}
	m, ok := mounts.byID[id]
	if !ok {
		return "", false
	}
	// The sandbox's mount of the same filesystem whose root holds m's,
	// the most specific: where it is, and the rest of m's root beneath.
	best, bestRoot := "", -1
	for _, s := range sandbox.byID {
		if s.dev == m.dev && policy.Under(m.root, s.root) && len(s.root) > bestRoot {
			best, bestRoot = path.Join(s.point, strings.TrimPrefix(m.root, s.root)), len(s.root)
		}
	}
	if bestRoot < 0 {
		return "", true // a filesystem of the caller's own
	}
	return path.Join(best, rest), true
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

// mountTable is a mount namespace's mounts by id.
type mountTable struct {
	view viewID
	file *os.File // the mountinfo it was read from, polled for changes
	byID map[uint64]mountEntry
}

// mountEntry is one mount: its filesystem (major:minor), its root (the
// path of its top within that filesystem) and its point (where it is,
// in the reading process's root).
type mountEntry struct{ dev, root, point string }

// mountsOf returns the mounts pid sees (its view: points are in its
// root), cached in *cache: read again when the kernel says the table
// changed since (a mountinfo file polls POLLPRI then), or for another
// view.
func (gs *guardState) mountsOf(cache **mountTable, proc string, pid int, view viewID) (*mountTable, bool) {
	if t := *cache; t != nil && t.view == view {
		fds := []unix.PollFd{{Fd: int32(t.file.Fd()), Events: unix.POLLPRI}}
		if n, err := unix.Poll(fds, 0); err == nil && n == 0 {
			return t, true
		}
	}
	if *cache != nil {
		(*cache).file.Close()
		*cache = nil
	}
	if pid <= 0 {
		return nil, false
	}
	f, err := os.Open(proc + "/" + strconv.Itoa(pid) + "/mountinfo")
	if err != nil {
		return nil, false
	}
	data, err := io.ReadAll(io.LimitReader(f, 16<<20))
	if err != nil {
		f.Close()
		return nil, false
	}
	t := &mountTable{view: view, file: f, byID: parseMountinfo(string(data))}
	*cache = t
	return t, true
}

// parseMountinfo reads a mountinfo file's lines: "id parent major:minor
// root point options …".
func parseMountinfo(data string) map[uint64]mountEntry {
	out := map[uint64]mountEntry{}
	for _, line := range strings.Split(data, "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		id, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		out[id] = mountEntry{dev: fields[2], root: unescapeMount(fields[3]), point: unescapeMount(fields[4])}
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
