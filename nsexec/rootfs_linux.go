package nsexec

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"golang.org/x/sys/unix"

	"github.com/srt-go/srt/internal/ownfile"
	"github.com/srt-go/srt/policy"
)

// The sandbox's root filesystem: built by the init from the plan under a
// private tmpfs, with its own /dev and a hardened /proc, then pivoted into.

// procMasks are /proc entries the command has no business reading; each
// is covered by an empty read-only file or directory.
var procMasks = []string{"kcore", "sysrq-trigger", "keys", "timer_list", "sched_debug", "latency_stats", "acpi", "scsi"}

// hardenProc makes every entry at the top of the sandbox's /proc that is
// not a process's own read-only, then masks procMasks. The top-level
// entries (irq, sys, bus, fs, driver, sysrq-trigger, mtrr, pressure, …)
// reach kernel state shared with the host, and the user namespace does
// not shield them from a caller who is root: its uid is mapped to itself,
// and procfs checks these files' modes against the real uid 0 (root
// changed /proc/irq/default_smp_affinity that way). The process
// directories stay writable (the command's own oom_score_adj, uid_map),
// as do the links into them (self, thread-self, mounts, net).
//
// Each entry a command could change is covered by the same entry of a
// second proc instance, mounted read-only in the staging area: a bind
// keeps its source mount's read-only flag, so one mount per entry
// suffices, and the instance goes with the staging area at pivot_root.
// For root, that is every entry (procfs lets an entry's owner chmod it,
// for the whole host); for another user, the directories and what their
// modes open to group or others (/proc/pressure's 0666 files).
//
// With a bound host /proc (fresh: false), the whole tree is made
// read-only: its process directories are the host's.
func hardenProc(proc, stage string, fresh bool) error {
	if !fresh {
		if err := setAttr(proc, unix.MOUNT_ATTR_RDONLY, true); err != nil {
			return err
		}
		return maskProc(proc, stage)
	}
	ro := filepath.Join(stage, "proc")
	if err := os.Mkdir(ro, 0o755); err != nil {
		return err
	}
	if err := unix.Mount("proc", ro, "proc", unix.MS_RDONLY|unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		return pathErr("mounting a read-only proc", ro, err)
	}
	// Root, owner of every entry, may write and chmod any of them; any
	// other user only what its mode opens to the group or to others, and
	// what a directory may hold.
	root := os.Getuid() == 0
	var names []string
	err := getdents{}.ReadDir(proc, func(name []byte, kind policy.Kind) {
		// Not the links into the process directories, nor what
		// maskProc covers anyway.
		if kind != policy.KindDir && kind != policy.KindRegular || isPID(name) || slices.Contains(procMasks, string(name)) {
			return
		}
		if !root && kind == policy.KindRegular {
			var st unix.Stat_t
			if unix.Stat(filepath.Join(proc, string(name)), &st) == nil && st.Mode&0o022 == 0 {
				return
			}
		}
		names = append(names, string(name))
	})
	if err != nil {
		return pathErr("listing", "/proc", err)
	}
	for _, n := range names {
		if err := unix.Mount(filepath.Join(ro, n), filepath.Join(proc, n), "", unix.MS_BIND, ""); err != nil {
			return pathErr("covering with a read-only copy", "/proc/"+n, err)
		}
	}
	return maskProc(proc, stage)
}

// isPID reports whether a /proc name is a process's directory.
func isPID(name []byte) bool {
	for _, c := range name {
		if c < '0' || c > '9' {
			return false
		}
	}
	return len(name) > 0
}

// maskProc masks procMasks under proc with an empty read-only directory
// or a read-only /dev/null, each made once in stage and bound (a bind
// keeps the read-only flag); the command has no capability to unmount
// them.
func maskProc(proc, stage string) error {
	var nullFile, emptyDir string
	for _, name := range procMasks {
		p := filepath.Join(proc, name)
		fi, err := os.Stat(p)
		if err != nil {
			continue
		}
		src := &nullFile
		if fi.IsDir() {
			src = &emptyDir
		}
		if *src == "" {
			if *src, err = readOnlySource(stage, fi.IsDir()); err != nil {
				return err
			}
		}
		if err := unix.Mount(*src, p, "", unix.MS_BIND, ""); err != nil {
			return pathErr("masking", "/proc/"+name, err)
		}
	}
	return nil
}

// readOnlySource makes, in stage, an empty directory (dir) or a /dev/null,
// on a read-only mount of its own, for masks to be bound from.
func readOnlySource(stage string, dir bool) (string, error) {
	src, from := filepath.Join(stage, "proc-mask-null"), "/dev/null"
	if dir {
		src, from = filepath.Join(stage, "proc-mask-dir"), ""
		if err := os.Mkdir(src, 0o555); err != nil {
			return "", err
		}
		from = src
	} else if err := ownfile.WriteNew(src, nil, 0o444); err != nil {
		return "", err
	}
	if err := unix.Mount(from, src, "", unix.MS_BIND, ""); err != nil {
		return "", pathErr("binding", src, err)
	}
	// Not nodev: a masked file reads as /dev/null does, empty.
	return src, setAttr(src, unix.MOUNT_ATTR_RDONLY, false)
}

func pathErr(op, path string, err error) error {
	return &os.PathError{Op: op, Path: path, Err: err}
}

// setAttr sets mount attributes on the mount at path, and with recursive
// on every mount beneath it too, atomically (mount_setattr): a remount
// loop would leave a window with some submounts still writable.
func setAttr(path string, attr uint64, recursive bool) error {
	flags := uint(unix.AT_SYMLINK_NOFOLLOW)
	if recursive {
		flags |= unix.AT_RECURSIVE
	}
	if err := unix.MountSetattr(unix.AT_FDCWD, path, flags, &unix.MountAttr{Attr_set: attr}); err != nil {
		return pathErr("mount_setattr", path, err)
	}
	return nil
}

// buildRoot builds the sandbox's root under a private tmpfs and pivots
// into it. Nothing is mounted in the host's namespace and nothing is
// created in the host's tree: mount points for masks live in the tmpfs.
func buildRoot(spec *Spec) error {
	if err := unix.Mount("", "/", "", unix.MS_REC|unix.MS_PRIVATE, ""); err != nil {
		return pathErr("making mounts private", "/", err)
	}
	base := filepath.Join(spec.RuntimeDir, "base")
	if err := os.Mkdir(base, 0o700); err != nil {
		return err
	}
	if err := unix.Mount("tmpfs", base, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=0700"); err != nil {
		return pathErr("mounting the staging tmpfs", base, err)
	}
	root, stage := filepath.Join(base, "root"), filepath.Join(base, "stage")
	for _, d := range []string{root, stage} {
		if err := os.Mkdir(d, 0o755); err != nil {
			return err
		}
	}
	// The whole host, read-only; its /proc and /dev are replaced by the
	// sandbox's own, so their host copies are detached first.
	if err := unix.Mount("/", root, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
		return pathErr("binding the host root", root, err)
	}
	for _, sub := range []string{"proc", "dev"} {
		if err := unix.Unmount(filepath.Join(root, sub), unix.MNT_DETACH); err != nil && !errors.Is(err, unix.EINVAL) {
			return pathErr("detaching the host's", "/"+sub, err)
		}
	}
	if err := setAttr(root, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, true); err != nil {
		return err
	}
	for i, m := range spec.Plan.Mounts {
		if err := applyMount(root, stage, i, m); err != nil {
			se := setupError(StepRoot, fmt.Errorf("%s %s (%s): %w", m.Kind, m.Path, m.Why, err))
			se.Path = m.Path
			return se
		}
	}
	// Every recursive bind of an ancestor of the runtime dir (the host
	// root, and allowWrite: ["/tmp"]) brings along a copy of the staging
	// tmpfs, writable where the bind is: through it the command could fill
	// its own masks. Detach every copy.
	for {
		if err := unix.Unmount(filepath.Join(root, base), unix.MNT_DETACH); err != nil {
			// EINVAL: no copy is left; ENOENT: the run dirs' mask
			// (keepPrivate) covers every copy there is.
			if errors.Is(err, unix.EINVAL) || errors.Is(err, unix.ENOENT) {
				break
			}
			return pathErr("detaching a copy of the staging area", base, err)
		}
	}
	if spec.Intercept {
		if err := pointResolverAtStub(root, stage); err != nil {
			return err
		}
	}
	if err := buildDev(filepath.Join(root, "dev")); err != nil {
		return err
	}
	fresh := true
	if err := unix.Mount("proc", filepath.Join(root, "proc"), "proc", unix.MS_NOSUID|unix.MS_NODEV|unix.MS_NOEXEC, ""); err != nil {
		fresh = false
		// A host whose /proc is partly covered (a container's masked
		// paths) lets no namespace mount a fresh one. Only when the
		// settings accept a weaker sandbox, the host's /proc is bound
		// instead, as the reference does: its processes become visible.
		if !errors.Is(err, unix.EPERM) || !spec.WeakerProc {
			return setupError(StepProc, pathErr("mounting proc", "/proc", err))
		}
		if err := unix.Mount("/proc", filepath.Join(root, "proc"), "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return pathErr("binding the host's proc", "/proc", err)
		}
		if spec.Debug {
			fmt.Fprintln(os.Stderr, "[SandboxDebug] no fresh /proc can be mounted here; the host's /proc is bound read-only (enableWeakerNestedSandbox): its processes are visible inside")
		}
	}
	if err := hardenProc(filepath.Join(root, "proc"), stage, fresh); err != nil {
		return err
	}
	// pivot_root(".", "."): the old root ends up stacked on the new one and
	// is detached at once, with no directory needed for it in the tree.
	if err := unix.Chdir(root); err != nil {
		return err
	}
	if err := unix.PivotRoot(".", "."); err != nil {
		return pathErr("pivot_root", root, err)
	}
	if err := unix.Unmount(".", unix.MNT_DETACH); err != nil {
		return pathErr("detaching the old root", "/", err)
	}
	return unix.Chdir("/")
}

func applyMount(root, stage string, i int, m Mount) error {
	target := filepath.Join(root, m.Path)
	switch m.Kind {
	case BindWritable, BindReadOnly:
		if err := unix.Mount(m.Path, target, "", unix.MS_BIND|unix.MS_REC, ""); err != nil {
			return pathErr("bind", m.Path, err)
		}
		attr := uint64(unix.MOUNT_ATTR_NOSUID | unix.MOUNT_ATTR_NODEV)
		if m.Kind == BindReadOnly {
			attr |= unix.MOUNT_ATTR_RDONLY
		}
		return setAttr(target, attr, true)
	case MaskDir:
		src := filepath.Join(stage, fmt.Sprintf("mask-%d", i))
		if err := os.Mkdir(src, 0o755); err != nil {
			return err
		}
		for _, k := range m.Keep {
			if err := os.MkdirAll(filepath.Join(src, k), 0o755); err != nil {
				return err
			}
		}
		for _, k := range m.KeepFiles {
			if err := os.MkdirAll(filepath.Dir(filepath.Join(src, k)), 0o755); err != nil {
				return err
			}
			if err := ownfile.WriteNew(filepath.Join(src, k), nil, 0o000); err != nil {
				return err
			}
		}
		// Read-only, not tmpfs: a writable mask would let the command
		// stage files where the host later looks.
		if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
			return pathErr("mask", m.Path, err)
		}
		return setAttr(target, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, false)
	case MaskFile:
		src := filepath.Join(stage, fmt.Sprintf("mask-%d", i))
		// Mode 000 on a read-only mount: reading it fails with EACCES
		// (the command has no capability to override that), and chmod
		// fails with EROFS.
		mode := os.FileMode(0o000)
		if m.Content != nil {
			mode = 0o444
		}
		if err := ownfile.WriteNew(src, m.Content, mode); err != nil {
			return err
		}
		if err := os.Chmod(src, mode); err != nil { // not the umask's
			return err
		}
		if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
			return pathErr("mask", m.Path, err)
		}
		return setAttr(target, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NODEV, false)
	case PinLink, MaskLink:
		// The symlink itself becomes a mount point (open_tree and
		// move_mount do not follow it, where mount(2) would), so it can
		// be neither removed nor replaced.
		src := target
		if m.Kind == MaskLink {
			src = filepath.Join(stage, fmt.Sprintf("link-%d", i))
			if err := os.Symlink(deadLink, src); err != nil {
				return err
			}
		}
		fd, err := unix.OpenTree(unix.AT_FDCWD, src, unix.OPEN_TREE_CLONE|unix.OPEN_TREE_CLOEXEC|unix.AT_SYMLINK_NOFOLLOW)
		if err != nil {
			return pathErr("open_tree", m.Path, err)
		}
		defer unix.Close(fd)
		if err := unix.MoveMount(fd, "", unix.AT_FDCWD, target, unix.MOVE_MOUNT_F_EMPTY_PATH); err != nil {
			return pathErr("move_mount", m.Path, err)
		}
		return nil
	}
	return fmt.Errorf("unknown mount kind %q", m.Kind)
}

// pointResolverAtStub covers /etc/resolv.conf (where it really is, for a
// symlinked one) with a read-only file naming the DNS stub.
func pointResolverAtStub(root, stage string) error {
	real, err := filepath.EvalSymlinks("/etc/resolv.conf")
	if err != nil {
		return nil // no resolver configuration to replace
	}
	src := filepath.Join(stage, "resolv.conf")
	if err := ownfile.WriteNew(src, []byte("nameserver 127.0.0.1\n"), 0o444); err != nil {
		return err
	}
	target := filepath.Join(root, real)
	if err := unix.Mount(src, target, "", unix.MS_BIND, ""); err != nil {
		return pathErr("binding", real, err)
	}
	return setAttr(target, unix.MOUNT_ATTR_RDONLY, false)
}

// buildDev makes a minimal /dev: the harmless character devices, bound
// from the host (a user namespace cannot mknod), a private devpts, a
// private /dev/shm, and the usual links. Then /dev itself is read-only.
func buildDev(dev string) error {
	if err := unix.Mount("tmpfs", dev, "tmpfs", unix.MS_NOSUID|unix.MS_NOEXEC, "mode=0755,size=64k"); err != nil {
		return pathErr("mounting", "/dev", err)
	}
	for _, name := range []string{"null", "zero", "full", "random", "urandom", "tty"} {
		p := filepath.Join(dev, name)
		if err := ownfile.WriteNew(p, nil, 0o666); err != nil {
			return err
		}
		if err := unix.Mount("/dev/"+name, p, "", unix.MS_BIND, ""); err != nil {
			return pathErr("binding", "/dev/"+name, err)
		}
		// Read-only: the device still takes writes (a read-only mount
		// guards a file's content and metadata, not a device's), but its
		// mode, owner and times, the host's, stay as they are — a command
		// running as root owns /dev/null and could chmod it 000.
		if err := setAttr(p, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC, false); err != nil {
			return err
		}
	}
	for _, d := range []string{"pts", "shm"} {
		if err := os.Mkdir(filepath.Join(dev, d), 0o755); err != nil {
			return err
		}
	}
	if err := unix.Mount("devpts", filepath.Join(dev, "pts"), "devpts", unix.MS_NOSUID|unix.MS_NOEXEC, "newinstance,ptmxmode=0666,mode=0620"); err != nil {
		return pathErr("mounting", "/dev/pts", err)
	}
	if err := unix.Mount("tmpfs", filepath.Join(dev, "shm"), "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, "mode=1777"); err != nil {
		return pathErr("mounting", "/dev/shm", err)
	}
	for link, target := range map[string]string{"ptmx": "pts/ptmx", "fd": "/proc/self/fd", "stdin": "/proc/self/fd/0", "stdout": "/proc/self/fd/1", "stderr": "/proc/self/fd/2"} {
		if err := os.Symlink(target, filepath.Join(dev, link)); err != nil {
			return err
		}
	}
	return setAttr(dev, unix.MOUNT_ATTR_RDONLY|unix.MOUNT_ATTR_NOSUID|unix.MOUNT_ATTR_NOEXEC, false)
}
