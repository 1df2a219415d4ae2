//go:build unix

package main

import (
	"errors"

	"golang.org/x/sys/unix"
)

// checkControlFD makes sure fd is open and readable before anything starts:
// a harness that asked for a control channel must not get a command that
// silently ignores it.
func checkControlFD(fd int) error { return checkFD(fd, unix.O_WRONLY, "writing") }

// checkWritableFD makes sure fd is open for writing.
func checkWritableFD(fd int) error { return checkFD(fd, unix.O_RDONLY, "reading") }

// checkFD makes sure fd is open and not in access mode refused, named
// what.
func checkFD(fd, refused int, what string) error {
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	if err != nil {
		if errors.Is(err, unix.EBADF) {
			return errors.New("it is not an open file descriptor")
		}
		return err
	}
	if flags&unix.O_ACCMODE == refused {
		return errors.New("it is open for " + what + " only")
	}
	return nil
}
