package seccomp

import (
	"slices"
	"testing"
)

// With the guard, every call that makes, moves or links a name, every open
// that may write, and every change of a file's metadata goes to the
// supervisor; a read-only open stays in the kernel; without it, all of
// them are allowed.
func TestGuardFilter(t *testing.T) {
	const (
		rdonly    = 0
		cloexec   = 0x80000
		directory = 0x10000
	)
	guard := Options{Guard: true}
	for goarch, a := range arches {
		type tc struct {
			call call
			want uint32
		}
		cases := []tc{
			{call{what: "openat read", nr: "openat", args: []uint32{0xffffff9c, 0, rdonly | cloexec | directory}}, retAllow},
			{call{what: "openat write", nr: "openat", args: []uint32{0xffffff9c, 0, oWronly}}, retUserNotif},
			{call{what: "openat rdwr", nr: "openat", args: []uint32{0xffffff9c, 0, oRdwr}}, retUserNotif},
			{call{what: "openat creat", nr: "openat", args: []uint32{0xffffff9c, 0, oCreat}}, retUserNotif},
			{call{what: "openat trunc", nr: "openat", args: []uint32{0xffffff9c, 0, oTrunc}}, retUserNotif},
		}
		for _, name := range []string{"mkdirat", "mknodat", "renameat", "renameat2", "linkat", "symlinkat", "truncate", "umask", "bind"} {
			cases = append(cases, tc{call{what: name, nr: name}, retUserNotif})
		}
		for name := range metaCalls {
			if _, ok := a.Nr[name]; ok {
				cases = append(cases, tc{call{what: name, nr: name}, retUserNotif})
			}
		}
		if _, ok := a.Nr["open"]; ok {
			cases = append(cases,
				tc{call{what: "open read", nr: "open", args: []uint32{0, rdonly}}, retAllow},
				tc{call{what: "open creat", nr: "open", args: []uint32{0, oCreat | oWronly}}, retUserNotif})
			for _, name := range []string{"creat", "mkdir", "mknod", "rename", "link", "symlink"} {
				cases = append(cases, tc{call{what: name, nr: name}, retUserNotif})
			}
		}
		for _, cmd := range append(inodeIoctls, 0x5000940e /* BTRFS_IOC_SUBVOL_CREATE */, 0x50009417 /* SNAP_CREATE_V2 */, 0x4008941a /* SUBVOL_SETFLAGS */) {
			if got := run(t, a, guard, call{what: "inode flags", nr: "ioctl", args: []uint32{3, cmd}}); got != retErrno|errnoEPERM {
				t.Errorf("%s ioctl %#x: %#x, want EPERM", goarch, cmd, got)
			}
		}
		for _, cmd := range []uint32{fiClone, fiCloneRange, fiDedupeRange, fsIOCGetFSLabel, 0x80086601 /* FS_IOC_GETFLAGS */, 0x5401 /* TCGETS */, 0x541b /* FIONREAD */} {
			if got := run(t, a, guard, call{what: "other ioctl", nr: "ioctl", args: []uint32{3, cmd}}); got != retAllow {
				t.Errorf("%s ioctl %#x: %#x, want allowed", goarch, cmd, got)
			}
		}
		if got := run(t, a, guard, call{what: "file_setattr", nr: "file_setattr"}); got != retErrno|errnoEPERM {
			t.Errorf("%s file_setattr: %#x, want EPERM", goarch, got)
		}
		reads := Options{Guard: true, GuardReads: true}
		if got := run(t, a, reads, call{what: "openat read", nr: "openat", args: []uint32{0xffffff9c, 0, rdonly}}); got != retUserNotif {
			t.Errorf("%s openat read with GuardReads: %#x, want the supervisor", goarch, got)
		}
		// O_PATH opens nothing to read or write (the kernel drops every
		// other flag with it), and ADDFD cannot hand one back.
		for _, o := range []Options{guard, reads} {
			if got := run(t, a, o, call{what: "openat O_PATH", nr: "openat", args: []uint32{0xffffff9c, 0, oPath | oCreat | oWronly}}); got != retAllow {
				t.Errorf("%s openat O_PATH (reads %v): %#x, want the kernel", goarch, o.GuardReads, got)
			}
		}
		if got := run(t, a, guard, call{what: "openat2", nr: "openat2"}); got != retErrno|errnoENOSYS {
			t.Errorf("%s openat2: %#x, want ENOSYS", goarch, got)
		}
		for _, c := range cases {
			if got := run(t, a, guard, c.call); got != c.want {
				t.Errorf("%s %s: %#x, want %#x", goarch, c.call.what, got, c.want)
			}
			if got := run(t, a, Options{Unix: UnixAll}, c.call); got != retAllow {
				t.Errorf("%s %s without the guard: %#x, want allowed", goarch, c.call.what, got)
			}
		}
	}
}

// Every guarded call is numbered where the kernel has it.
func TestFileCalls(t *testing.T) {
	for name := range fileCalls {
		if _, ok := arches["amd64"].Nr[name]; !ok {
			t.Errorf("x86_64 has no number for %s", name)
		}
		if _, ok := arches["arm64"].Nr[name]; !ok && !slices.Contains(legacyCalls, name) {
			t.Errorf("aarch64 has no number for %s", name)
		}
	}
	for name, want := range map[string]FileCall{
		"renameat2": {Op: FileRename, Dir: 0, Path: 1, Dir2: 2, Path2: 3, Flags: 4, Mode: -1},    // (olddirfd, old, newdirfd, new, flags)
		"symlinkat": {Op: FileSymlink, Dir: -1, Path: 0, Dir2: 1, Path2: 2, Flags: -1, Mode: -1}, // (target, newdirfd, linkpath)
		"mknodat":   {Op: FileMknod, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: -1, Mode: 2},   // (dirfd, path, mode, dev)
		"unlinkat":  {Op: FileRemove, Dir: 0, Path: 1, Dir2: -1, Path2: -1, Flags: 2, Mode: -1},  // (dirfd, path, flags)
		"rmdir":     {Op: FileRemove, Dir: -1, Path: 0, Dir2: -1, Path2: -1, Flags: -1, Mode: -1, RemoveDir: true},
	} {
		if fileCalls[name] != want {
			t.Errorf("%s: %+v, want %+v", name, fileCalls[name], want)
		}
	}
}
