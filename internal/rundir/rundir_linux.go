package rundir

import (
	"strconv"

	"golang.org/x/sys/unix"
)

// oSearch opens a directory only to work beneath it.
const oSearch = unix.O_PATH

// openDir is openDirPinned: O_PATH pins the inode judged.
var openDir = openDirPinned

// openDirPinned opens the directory name in dir, never through a symlink:
// check judges what the name is, and it is given mode 0700 first when
// needsChmod says so — through a descriptor of the inode just
// judged, whatever happens to the name meanwhile.
func openDirPinned(dir int, name string, check func(*unix.Stat_t) error, private bool) (int, error) {
	p, err := unix.Openat(dir, name, unix.O_PATH|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		return -1, err
	}
	defer unix.Close(p)
	var st unix.Stat_t
	if err := unix.Fstat(p, &st); err != nil {
		return -1, err
	}
	if err := check(&st); err != nil {
		return -1, err
	}
	self := "/proc/self/fd/" + strconv.Itoa(p)
	if needsChmod(st.Mode, private) {
		if err := unix.Chmod(self, 0o700); err != nil {
			return -1, err
		}
	}
	return unix.Open(self, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
}

// renameNoReplace renames without replacing what is at the new name.
func renameNoReplace(dir int, name string, to int, fresh string) error {
	return unix.Renameat2(dir, name, to, fresh, unix.RENAME_NOREPLACE)
}
