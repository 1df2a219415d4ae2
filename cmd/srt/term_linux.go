package main

import (
	"os"

	"golang.org/x/sys/unix"
)

// What the pty relay (pty_unix.go) and srt's start need of Linux.

// The termios requests, and the count of bytes typed and not yet read.
const tcGet, tcSet, inQueue = unix.TCGETS, unix.TCSETS, unix.TIOCINQ

// openPTY returns a new pty pair: the master non-blocking for the poller,
// the slave without becoming anyone's controlling terminal.
func openPTY() (master, slave *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: "/dev/ptmx", Err: err}
	}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		unix.Close(m)
		return nil, nil, os.NewSyscallError("unlockpt", err)
	}
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		unix.Close(m)
		return nil, nil, os.NewSyscallError("TIOCGPTPEER", errno)
	}
	return os.NewFile(uintptr(m), "pty-master"), os.NewFile(s, "pty-slave"), nil
}

// closeOnExec marks every descriptor srt inherited above stdio
// close-on-exec: none of them may reach the sandbox (the init does the
// same before the command runs; this keeps them from the init too).
func closeOnExec() { unix.CloseRange(3, ^uint(0), unix.CLOSE_RANGE_CLOEXEC) }

// heldByPath says whether fd is a character device held by path only
// (O_PATH): no terminal to the kernel's terminal calls, yet the command
// could open it again, for reading and writing, through /proc/self/fd.
func heldByPath(fd int) bool {
	fl, err := unix.FcntlInt(uintptr(fd), unix.F_GETFL, 0)
	var st unix.Stat_t
	return err == nil && fl&unix.O_PATH != 0 && unix.Fstat(fd, &st) == nil && st.Mode&unix.S_IFMT == unix.S_IFCHR
}
