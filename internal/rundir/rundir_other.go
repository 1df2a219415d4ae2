//go:build unix && !linux

package rundir

import "golang.org/x/sys/unix"

// oSearch opens a directory only to work beneath it: there is no O_PATH
// here.
const oSearch = unix.O_RDONLY

// openDir: names are all there is without O_PATH.
var openDir = openDirByName

// renameNoReplace renames without replacing what is at the new name.
func renameNoReplace(dir int, name string, to int, fresh string) error {
	return unix.RenameatxNp(dir, name, to, fresh, unix.RENAME_EXCL)
}
