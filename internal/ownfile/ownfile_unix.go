//go:build unix

package ownfile

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

const oNoFollow = unix.O_NOFOLLOW

func create(path string, perm os.FileMode) (*os.File, error) {
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
