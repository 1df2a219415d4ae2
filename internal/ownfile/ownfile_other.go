//go:build !unix

package ownfile

import "os"

const oNoFollow = 0

// create on a system without O_NOFOLLOW refuses what is already there
// unless it is a plain file with one name (os.Lstat, then the open: a
// name swapped between the two is the caller's risk there).
func create(path string, perm os.FileMode) (*os.File, error) {
	if fi, err := os.Lstat(path); err == nil && !fi.Mode().IsRegular() {
		return nil, planted("not a regular file")
	}
	return os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_TRUNC|os.O_APPEND, perm)
}
