//go:build unix

package ownfile

import (
	"errors"
	"os"
	"path/filepath"
	"strings"

	"golang.org/x/sys/unix"
)

const oNoFollow = unix.O_NOFOLLOW

func create(path string, perm os.FileMode) (*os.File, error) {
	if callersOwn(path) {
		// /dev/stderr, /dev/fd/N: the caller's own descriptor, as
		// fd:N names it; nothing a sandbox can plant.
		return os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	}
	// Not O_TRUNC: nothing is emptied before it is known to be srt's
	// to write. O_NONBLOCK: a FIFO planted there does not hold srt.
	fd, err := unix.Open(path, unix.O_WRONLY|unix.O_CREAT|unix.O_APPEND|unix.O_NOFOLLOW|unix.O_NONBLOCK|unix.O_NOCTTY|unix.O_CLOEXEC, uint32(perm.Perm()))
	switch {
	case errors.Is(err, unix.ELOOP):
		return nil, planted("a symlink")
	case errors.Is(err, unix.ENXIO):
		return nil, planted("a FIFO")
	case err != nil:
		return nil, err
	}
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		unix.Close(fd)
		return nil, err
	}
	switch {
	case st.Mode&unix.S_IFMT == unix.S_IFCHR:
		// /dev/null, a terminal: written, never emptied; no sandbox
		// can make a device node (the guard refuses mknod).
		if err := unix.SetNonblock(fd, false); err != nil {
			unix.Close(fd)
			return nil, err
		}
		return os.NewFile(uintptr(fd), path), nil
	case st.Mode&unix.S_IFMT != unix.S_IFREG:
		err = planted("not a regular file")
	case st.Nlink != 1:
		err = planted("a file with another name (a hard link)")
	case int(st.Uid) != os.Geteuid():
		err = planted("another user's file")
	}
	if err == nil {
		if err = unix.SetNonblock(fd, false); err == nil {
			err = unix.Ftruncate(fd, 0)
		}
	}
	if err != nil {
		unix.Close(fd)
		return nil, err
	}
	return os.NewFile(uintptr(fd), path), nil
}

// callersOwn reports whether path names one of the caller's own
// descriptors: /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N.
func callersOwn(path string) bool {
	switch p := filepath.Clean(path); {
	case p == "/dev/stdout" || p == "/dev/stderr":
		return true
	case strings.HasPrefix(p, "/dev/fd/"), strings.HasPrefix(p, "/proc/self/fd/"):
		n := p[strings.LastIndexByte(p, '/')+1:]
		return n != "" && strings.Trim(n, "0123456789") == ""
	}
	return false
}
