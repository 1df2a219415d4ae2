package main

import (
	"bytes"
	"os"
	"strconv"
	"unsafe"

	"golang.org/x/sys/unix"
)

// What the pty relay (pty_unix.go) and srt's start need of macOS: the
// BSD spellings of what term_linux.go does. Never run on macOS yet.

// The termios requests, and the count of bytes typed and not yet read
// (FIONREAD, _IOR('f', 127, int), which x/sys/unix does not name here).
const tcGet, tcSet, inQueue = unix.TIOCGETA, unix.TIOCSETA, 0x4004667f

// openPTY returns a new pty pair: the master non-blocking for the poller,
// the slave without becoming anyone's controlling terminal (grantpt,
// unlockpt and ptsname are these ioctls in libSystem).
func openPTY() (master, slave *os.File, err error) {
	m, err := unix.Open("/dev/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, &os.PathError{Op: "open", Path: "/dev/ptmx", Err: err}
	}
	for _, req := range []uint{unix.TIOCPTYGRANT, unix.TIOCPTYUNLK} {
		if err := unix.IoctlSetInt(m, req, 0); err != nil {
			unix.Close(m)
			return nil, nil, os.NewSyscallError("ioctl "+strconv.FormatUint(uint64(req), 16), err)
		}
	}
	// ptsname: the kernel writes the slave's name into a 128-byte buffer,
	// which no libSystem wrapper of x/sys/unix takes; libSystem's
	// syscall(2), as creack/pty calls it.
	var name [128]byte
	//lint:ignore SA1019 no wrapper takes an out-buffer of this size
	if _, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), uintptr(unix.TIOCPTYGNAME), uintptr(unsafe.Pointer(&name[0]))); errno != 0 {
		unix.Close(m)
		return nil, nil, os.NewSyscallError("ioctl TIOCPTYGNAME", errno)
	}
	n := bytes.IndexByte(name[:], 0)
	if n < 0 {
		n = len(name)
	}
	path := string(name[:n])
	s, err := unix.Open(path, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC, 0)
	if err != nil {
		unix.Close(m)
		return nil, nil, &os.PathError{Op: "open", Path: path, Err: err}
	}
	return os.NewFile(uintptr(m), "pty-master"), os.NewFile(uintptr(s), path), nil
}

// closeOnExec marks every descriptor srt inherited above stdio
// close-on-exec: none of them may reach the sandbox.
func closeOnExec() {
	fds, _ := os.ReadDir("/dev/fd")
	for _, e := range fds {
		if fd, err := strconv.Atoi(e.Name()); err == nil && fd > 2 {
			unix.CloseOnExec(fd)
		}
	}
}

// heldByPath: macOS has no O_PATH descriptors.
func heldByPath(int) bool { return false }
