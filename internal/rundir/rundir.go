//go:build unix

// Package rundir makes each run's private directory, under a per-user
// base in TMPDIR, and removes it, and those of earlier runs whose srt is
// gone, whatever the command left inside. Every backend's runs use it:
// the namespace sandbox's hold the command's TMPDIR, the staging area and
// the proxy's Unix socket; the macOS ones the TMPDIR, the trust bundle
// and the profile.
package rundir

import (
	"crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The runtime dir. A live run holds an exclusive flock on its own directory
// (not on a file inside, which a command allowed to write there could
// delete). A run dir is made as "new-*", locked, and only then renamed
// "run-*", so a sweep of stale run dirs never meets one that is not yet
// locked; no lock is shared between runs, which a command of the same
// user could hold to stop every later run.

// NewDirAge is how old a "new-*" directory must be to count as stale: one
// whose srt died between making it and renaming it.
const NewDirAge = time.Minute

// New makes this run's private directory under the per-user
// base, after removing the directories of earlier runs whose srt is gone
// (a SIGKILLed srt cannot clean up after itself). It returns the directory
// and the open, locked descriptor that marks it live. The directory is
// named by its real path: a TMPDIR behind a symlink (macOS's /var is
// /private/var) is resolved, as mounts and Seatbelt rules need.
func New() (string, *os.File, error) {
	tmp, err := filepath.EvalSymlinks(os.TempDir())
	if err != nil {
		return "", nil, fmt.Errorf("resolving TMPDIR %s: %w", os.TempDir(), err)
	}
	base := filepath.Join(tmp, fmt.Sprintf("srt-%d", os.Getuid()))
	if err := os.Mkdir(base, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", nil, fmt.Errorf("creating the runtime dir %s: %w", base, err)
	}
	baseDir, err := openPrivateDir(base)
	if err != nil {
		return "", nil, err
	}
	defer baseDir.Close()
	// Everything from here goes through the base's descriptor, never its
	// name: a process that may rename entries in its parent could swap
	// the base, or a stale run dir, for a symlink, and have srt change
	// or remove what that leads to.
	bfd := int(baseDir.Fd())
	for _, stale := range claimStale(bfd) {
		removeAt(bfd, stale.name)
		stale.f.Close()
	}
	var suffix string
	for tries := 0; ; tries++ {
		suffix = strconv.FormatUint(uint64(randUint32()), 10)
		err = unix.Mkdirat(bfd, "new-"+suffix, 0o700)
		if err != unix.EEXIST || tries > 100 {
			break
		}
	}
	if err != nil {
		return "", nil, fmt.Errorf("creating a run dir in %s: %w", base, err)
	}
	fresh := "new-" + suffix
	fd, err := unix.Openat(bfd, fresh, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	var lock *os.File
	if err == nil {
		lock = os.NewFile(uintptr(fd), filepath.Join(base, fresh))
		if err = flock(lock, unix.LOCK_EX|unix.LOCK_NB); err == nil {
			err = unix.Renameat(bfd, fresh, bfd, "run-"+suffix)
		}
		if err != nil {
			lock.Close()
		}
	}
	if err != nil {
		unix.Unlinkat(bfd, fresh, unix.AT_REMOVEDIR)
		return "", nil, fmt.Errorf("locking a run dir in %s: %w", base, err)
	}
	return filepath.Join(base, "run-"+suffix), lock, nil
}

// randUint32 is a run dir's random name.
func randUint32() uint32 {
	var b [4]byte
	rand.Read(b[:])
	return binary.LittleEndian.Uint32(b[:])
}

// openPrivateDir opens base, which must be a directory of this user's,
// not a symlink: another user could have made it first, to watch or swap
// our files. A mode other than 0700 — a command allowed to write its
// parent could have changed it — is set back first.
func openPrivateDir(base string) (*os.File, error) {
	fd, err := openDir(unix.AT_FDCWD, base, func(st *unix.Stat_t) error {
		if st.Mode&unix.S_IFMT != unix.S_IFDIR || int(st.Uid) != os.Getuid() {
			return fmt.Errorf("the runtime dir %s is not a directory of uid %d; remove it", base, os.Getuid())
		}
		return nil
	}, true)
	if err != nil {
		var pe *os.PathError
		if errors.As(err, &pe) || errors.Is(err, unix.ELOOP) || errors.Is(err, unix.ENOTDIR) {
			return nil, fmt.Errorf("opening the runtime dir %s: %w", base, err)
		}
		return nil, err
	}
	return os.NewFile(uintptr(fd), base), nil
}

// claimed is a stale run dir, by its name in the base, open and locked.
type claimed struct {
	name string
	f    *os.File
}

// claimStale returns, open and locked, the run dirs in the base (its
// descriptor bfd) that no live srt holds: every "run-*" not locked, and
// every "new-*" older than NewDirAge. A dir of an earlier srt version is
// live while its lock file is locked. Each is opened relative to the
// base and never through a symlink; one made unreadable by what ran there
// is given 0700 as openDirAt does (only then: every launch looks at every
// live run's directory).
func claimStale(bfd int) []claimed {
	names, err := dirNames(bfd)
	if err != nil {
		return nil
	}
	var out []claimed
	for _, name := range names {
		switch {
		case strings.HasPrefix(name, "run-"):
		case strings.HasPrefix(name, "new-"):
			var st unix.Stat_t
			if unix.Fstatat(bfd, name, &st, unix.AT_SYMLINK_NOFOLLOW) != nil || time.Since(time.Unix(int64(st.Mtim.Sec), 0)) < NewDirAge {
				continue // being made now
			}
		default:
			continue
		}
		fd, err := unix.Openat(bfd, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		if err == unix.EACCES {
			fd, err = openDirAt(bfd, name) // made unreadable by what ran there
		}
		if err != nil {
			continue // not a directory, or gone
		}
		f := os.NewFile(uintptr(fd), name)
		if flock(f, unix.LOCK_EX|unix.LOCK_NB) != nil || oldLockHeld(fd) {
			f.Close()
			continue
		}
		out = append(out, claimed{name: name, f: f})
	}
	return out
}

// oldLockHeld reports whether the run dir dir carries the lock file of an
// earlier srt version, locked by that live run.
func oldLockHeld(dir int) bool {
	fd, err := unix.Openat(dir, "lock", unix.O_RDWR|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return false
	}
	f := os.NewFile(uintptr(fd), "lock")
	defer f.Close()
	return flock(f, unix.LOCK_EX|unix.LOCK_NB) != nil
}

func flock(f *os.File, how int) error {
	for {
		err := unix.Flock(int(f.Fd()), how)
		if err != unix.EINTR {
			return err
		}
	}
}

// RemoveTree removes path and everything beneath it, whatever the
// command left there: a directory it made unreadable or unwritable (mode
// 000) is made 0700 first — it is this user's, as the sandbox maps no
// other uid — and a tree deeper than descriptors allow is taken apart by
// moving its deep directories up to path. It works through descriptors
// and never follows a symlink.
func RemoveTree(path string) error {
	if err := os.RemoveAll(path); err == nil {
		return nil
	}
	return removeWalk(path)
}

// removeWalk is RemoveTree's own walk, for what os.RemoveAll leaves.
func removeWalk(path string) error {
	parent, err := unix.Open(filepath.Dir(path), oSearch|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	defer unix.Close(parent)
	if err := removeAt(parent, filepath.Base(path)); err != nil {
		return &os.PathError{Op: "remove", Path: path, Err: err}
	}
	return nil
}

// removeAt removes name in the directory parent and everything beneath
// it, through descriptors, never following a symlink.
func removeAt(parent int, name string) error {
	top, err := openDirAt(parent, name)
	if err != nil {
		if err == unix.ENOTDIR {
			err = unix.Unlinkat(parent, name, 0)
		}
		if err == nil || err == unix.ENOENT {
			return nil
		}
		return err
	}
	defer unix.Close(top)
	// Each pass empties top; directories deeper than maxDepth are moved
	// into top under fresh names, for a later pass.
	moved := 0
	for pass := 0; ; pass++ {
		names, err := dirNames(top)
		if err != nil {
			return err
		}
		if len(names) == 0 {
			break
		}
		if pass > 1_000_000 {
			return errors.New("does not empty")
		}
		for _, n := range names {
			emptyAndRemove(top, n, 1, top, &moved)
		}
	}
	if err := unix.Unlinkat(parent, name, unix.AT_REMOVEDIR); err != nil && err != unix.ENOENT {
		return err
	}
	return nil
}

// maxDepth is how many directory descriptors removeTree holds at once.
const maxDepth = 64

// emptyAndRemove removes name in dir: a file at once, a directory after
// its contents. Past maxDepth a directory is moved into top instead.
func emptyAndRemove(dir int, name string, depth int, top int, moved *int) {
	err := unix.Unlinkat(dir, name, 0)
	if err == nil || err == unix.ENOENT {
		return
	}
	if depth >= maxDepth {
		// Moving a directory to another parent needs write permission
		// on it (its ".." changes).
		if fd, err := openDirAt(dir, name); err == nil {
			unix.Close(fd)
		}
		for {
			*moved++
			fresh := ".srt-deep-" + strconv.Itoa(*moved)
			err := renameNoReplace(dir, name, top, fresh)
			if err == unix.EINVAL || err == unix.ENOTSUP {
				if unix.Fstatat(top, fresh, new(unix.Stat_t), unix.AT_SYMLINK_NOFOLLOW) == nil {
					continue
				}
				err = unix.Renameat(dir, name, top, fresh)
			}
			if err != unix.EEXIST {
				return // a later pass of removeTree takes it
			}
		}
	}
	fd, err := openDirAt(dir, name)
	if err != nil {
		return
	}
	names, _ := dirNames(fd)
	for _, n := range names {
		emptyAndRemove(fd, n, depth+1, top, moved)
	}
	unix.Close(fd)
	unix.Unlinkat(dir, name, unix.AT_REMOVEDIR)
}

// openDirAt opens the directory name in dir for listing and removing its
// entries, never through a symlink, giving it mode 0700 first (listing
// needs read, unlinking write and search permission).
func openDirAt(dir int, name string) (int, error) {
	return openDir(dir, name, func(st *unix.Stat_t) error {
		if st.Mode&unix.S_IFMT != unix.S_IFDIR {
			return unix.ENOTDIR
		}
		return nil
	}, false)
}

// openDirByName opens the directory name in dir, never through a symlink:
// check judges what the name is, and it is given mode 0700 first when
// needsChmod says so. Without O_PATH it is opened first and changed
// through the descriptor, so that what is judged is what is changed. Only
// a directory its owner may not read (mode 000, as a command can leave
// one) cannot be opened so: it is judged by name, changed by name without
// following a symlink, then opened and found to be the inode judged. A
// process swapping names in the tree meanwhile (RENAME_SWAP) could have
// its swapped-in file's mode changed to 0700; it would need to outlive
// its run (only one that left its process group can) and to hold a
// second name of that file in a tree it may write.
func openDirByName(dir int, name string, check func(*unix.Stat_t) error, private bool) (int, error) {
	fd, err := unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err == nil {
		var st unix.Stat_t
		if err = unix.Fstat(fd, &st); err == nil {
			if err = check(&st); err == nil && needsChmod(uint32(st.Mode), private) {
				err = unix.Fchmod(fd, 0o700)
			}
		}
		if err != nil {
			unix.Close(fd)
			return -1, err
		}
		return fd, nil
	}
	if err != unix.EACCES {
		return -1, err
	}
	var st unix.Stat_t
	if err := unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return -1, err
	}
	if err := check(&st); err != nil {
		return -1, err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFDIR {
		return -1, unix.ENOTDIR
	}
	if err := unix.Fchmodat(dir, name, 0o700, unix.AT_SYMLINK_NOFOLLOW); err != nil {
		return -1, err
	}
	fd, err = unix.Openat(dir, name, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	var now unix.Stat_t
	if err := unix.Fstat(fd, &now); err != nil || now.Dev != st.Dev || now.Ino != st.Ino {
		unix.Close(fd)
		return -1, unix.ENOTDIR // replaced meanwhile
	}
	return fd, nil
}

// needsChmod says whether a directory of mode needs mode 0700 first: a
// private one when it is not exactly that, another when its owner may not
// list, search and write it.
func needsChmod(mode uint32, private bool) bool {
	if private {
		return mode&0o777 != 0o700
	}
	return mode&0o700 != 0o700
}

// dirNames lists the names in the open directory fd, from its start,
// through a descriptor of its own (its own offset).
func dirNames(fd int) ([]string, error) {
	d, err := unix.Openat(fd, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, err
	}
	f := os.NewFile(uintptr(d), ".")
	defer f.Close()
	return f.Readdirnames(-1)
}
