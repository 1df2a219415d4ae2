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
// as alias, a .bashrc onto foo. The guard judges a call by the path the
// process names; there the protected name is gone. So for a process in
// a mount namespace other than the sandbox's, the guard also judges the
// name as the mount's source names it: the mount's root (the path of
// that directory or file within its filesystem, from the process's
// mountinfo) and the rest of the path beneath it. Names are judged
// there, not deny entries, whose paths are the host's and not the
// filesystem's.

// aliasJudge returns what the name at pl is as its mount's source names
// it, when the calling process is in a mount namespace of its own and
// that is stricter than Free or Context (Free otherwise).
func (k *call) aliasJudge(pl place) (policy.Name, string) {
	if !k.pol.NestedNamespaces || pl.dir < 0 || pl.name == "" {
		return policy.Free, ""
	}
	if k.mntNS == 0 {
		if ns, ok := k.mountNS(k.pid); ok {
			k.mntNS = ns
		}
	}
	ns, ok := k.mntNS, k.mntNS != 0
	if !ok {
		return policy.Protected, pl.full() + " (the caller's mount namespace cannot be told)"
	}
	if base, ok := k.baseMountNS(); ok && ns == base {
		return policy.Free, ""
	}
	mounts, ok := k.gs.mountsOf(k.pol.Proc, k.pid, ns)
	if !ok {
		return policy.Protected, pl.full() + " (the caller's mounts cannot be read)"
	}
	var full string
	if pl.name != "." {
		// The name itself may be a mount's root (a file bound onto it).
		var x, d unix.Statx_t
		if unix.Statx(pl.dir, pl.name, unix.AT_SYMLINK_NOFOLLOW|unix.AT_NO_AUTOMOUNT, unix.STATX_MNT_ID, &x) == nil &&
			unix.Statx(pl.dir, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &d) == nil && x.Mnt_id != d.Mnt_id {
			if m, ok := mounts.byID[x.Mnt_id]; ok {
				full = m
			}
		}
	}
	if full == "" {
		// pl.path lies beneath its mount's point; what follows that is
		// beneath the mount's root.
		var x unix.Statx_t
		root, ok := "", false
		if unix.Statx(pl.dir, "", unix.AT_EMPTY_PATH, unix.STATX_MNT_ID, &x) == nil {
			root, ok = mounts.byID[x.Mnt_id]
		}
		if !ok {
			return policy.Protected, pl.full() + " (its mount cannot be found in the caller's mounts)"
		}
		point := mounts.point[x.Mnt_id]
		rest := strings.TrimPrefix(strings.TrimPrefix(pl.path, point), "/")
		if point != "/" && pl.path != point && !strings.HasPrefix(pl.path, point+"/") {
			return policy.Protected, pl.full() + " (its mount's point is not on its path)"
		}
		full = path.Join(root, rest)
		if pl.name != "." {
			full = path.Join(full, pl.name)
		}
	}
	n, rule := k.pol.Guard.Judge(full)
	if n == policy.Free || n == policy.Context {
		return policy.Free, ""
	}
	return n, rule + " (bound at " + pl.full() + ")"
}

// mountNS is the inode of pid's mount namespace.
func (k *call) mountNS(pid int) (uint64, bool) {
	var st unix.Stat_t
	if err := unix.Stat(k.pol.Proc+"/"+strconv.Itoa(pid)+"/ns/mnt", &st); err != nil {
		return 0, false
	}
	return st.Ino, true
}

// baseMountNS is the inode of the sandbox's own mount namespace (its
// init's), once known.
func (k *call) baseMountNS() (uint64, bool) {
	if k.gs.baseNS != 0 {
		return k.gs.baseNS, true
	}
	init := int(k.pol.initPid.Load())
	if init <= 0 {
		return 0, false
	}
	ns, ok := k.mountNS(init)
	if ok {
		k.gs.baseNS = ns
	}
	return ns, ok
}

// mountTable is a mount namespace's mounts by id: each one's root (the
// path of its top within its filesystem) and point (where it is, in the
// process's root).
type mountTable struct {
	ns    uint64
	file  *os.File // the mountinfo it was read from, polled for changes
	byID  map[uint64]string
	point map[uint64]string
}

// mountsOf returns the mounts of pid's namespace ns: read again when the
// kernel says the table changed since (a mountinfo file polls
// POLLPRI|POLLERR then), or for another namespace.
func (gs *guardState) mountsOf(proc string, pid int, ns uint64) (*mountTable, bool) {
	if t := gs.mounts; t != nil && t.ns == ns {
		fds := []unix.PollFd{{Fd: int32(t.file.Fd()), Events: unix.POLLPRI}}
		if n, err := unix.Poll(fds, 0); err == nil && n == 0 {
			return t, true
		}
	}
	if gs.mounts != nil {
		gs.mounts.file.Close()
		gs.mounts = nil
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
	t := &mountTable{ns: ns, file: f, byID: map[uint64]string{}, point: map[uint64]string{}}
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) < 5 {
			continue
		}
		id, err := strconv.ParseUint(fields[0], 10, 64)
		if err != nil {
			continue
		}
		t.byID[id] = unescapeMount(fields[3])
		t.point[id] = unescapeMount(fields[4])
	}
	gs.mounts = t
	return t, true
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
