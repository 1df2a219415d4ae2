//go:build unix

package main

import (
	"errors"

	"golang.org/x/sys/unix"
)

// checkControlFD makes sure fd is open and readable before anything starts:
// a harness that asked for a control channel must not get a command that
// silently ignores it.
func checkControlFD(fd int) error {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		if errors.Is(err, unix.EBADF) {
			return errors.New("it is not an open file descriptor")
		}
		return err
	}
	if flags&unix.O_ACCMODE == unix.O_WRONLY {
		return errors.New("it is open for writing only")
	}
	return nil
}

// checkWritableFD makes sure fd is open for writing.
func checkWritableFD(fd int) error {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		if errors.Is(err, unix.EBADF) {
			return errors.New("it is not an open file descriptor")
		}
		return err
	}
	if flags&unix.O_ACCMODE == unix.O_RDONLY {
		return errors.New("it is open for reading only")
	}
	return nil
}
