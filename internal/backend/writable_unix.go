//go:build unix

package backend

import (
	"os"
	"strings"

	"golang.org/x/sys/unix"
)

// WritableOnHost reports whether this user could write path on the host:
// a denial there came from the sandbox.
func WritableOnHost(path string) bool {
	for p := path; p != "/" && p != "."; p = parentDir(p) {
		if _, err := os.Lstat(p); err == nil {
			return unix.Access(p, unix.W_OK) == nil
		}
	}
	return false
}

func parentDir(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}
