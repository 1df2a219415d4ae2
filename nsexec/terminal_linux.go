package nsexec

import (
	"io"
	"os"
	"os/exec"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// The sandbox's own terminal. When the command's stdin is a terminal
// (Spec.Terminal: the pty srt made for it, or a wrapped run's), the init
// opens a pseudo-terminal in the sandbox's devpts and gives the command
// its slave — /dev/pts/0 inside, so tty(1) and ttyname(3) find it — with
// the outer terminal's modes and size. The init relays bytes between the
// outer terminal, raw meanwhile, and the master.
//
// The init is the session leader that holds the terminal, and the command
// a process group of that session, in the foreground. Ctrl-Z then stops
// the command: a session leader's own group is orphaned, and the kernel
// drops a terminal's stop signals to orphaned groups. The init sees the
// command stop and tells srt, which stops too.
//
// On demand (Spec.TerminalOnDemand: srt's stdout is not a terminal, as
// in srt cmd | less), the command's group starts in the background, the
// init's in the foreground: the kernel stops the command when it first
// reads the terminal or changes its modes (SIGTTIN, SIGTTOU; its group
// is not orphaned, its parent the init being of the same session). The
// init then gives it the foreground, lets it go on and tells srt, which
// only now reads the caller's terminal for it.

// outer is the outer terminal's descriptor: the init's stdin.
const outer = 0

// terminal is the sandbox's pty and the outer terminal it relays.
type terminal struct {
	master, slave *os.File
	out           int // where the command's output goes: 1 when it is the outer terminal, else outer
	saved         *term.State
	copied        chan struct{} // the output relay is over
	// onDemand: the command starts in the background of the terminal
	// and is given it (given) when it stops for it.
	onDemand, given bool
}

// openTerminal makes the sandbox's terminal, once the root is built. It
// returns nil when stdin is not a terminal.
func openTerminal(onDemand bool) (*terminal, error) {
	if !term.IsTerminal(outer) {
		return nil, nil
	}
	modes, err := unix.IoctlGetTermios(outer, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	m, err := unix.Open("/dev/pts/ptmx", unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC|unix.O_NONBLOCK, 0)
	if err != nil {
		return nil, pathErr("open", "/dev/pts/ptmx", err)
	}
	t := &terminal{master: os.NewFile(uintptr(m), "pty-master"), out: outer, copied: make(chan struct{}), onDemand: onDemand}
	if err := unix.IoctlSetPointerInt(m, unix.TIOCSPTLCK, 0); err != nil {
		t.master.Close()
		return nil, os.NewSyscallError("unlockpt", err)
	}
	s, _, errno := unix.Syscall(unix.SYS_IOCTL, uintptr(m), unix.TIOCGPTPEER, unix.O_RDWR|unix.O_NOCTTY|unix.O_CLOEXEC)
	if errno != 0 {
		t.master.Close()
		return nil, os.NewSyscallError("TIOCGPTPEER", errno)
	}
	t.slave = os.NewFile(s, "pty-slave")
	if err := unix.IoctlSetTermios(int(s), unix.TCSETS, modes); err != nil {
		t.close()
		return nil, err
	}
	t.resize()
	// This process is the leader of a session without a terminal
	// (startsInit): the sandbox's becomes its controlling terminal.
	if err := unix.IoctlSetInt(int(s), unix.TIOCSCTTY, 0); err != nil {
		t.close()
		return nil, os.NewSyscallError("TIOCSCTTY", err)
	}
	if sameFile(outer, 1) {
		t.out = 1
	}
	if t.saved, err = term.MakeRaw(outer); err != nil {
		t.close()
		return nil, err
	}
	go io.Copy(t.master, os.Stdin) // ends with the init; a read of stdin cannot be interrupted
	go func() {
		// EIO once every holder of the slave is gone.
		io.Copy(os.NewFile(uintptr(t.out), "terminal"), t.master)
		close(t.copied)
	}()
	return t, nil
}

// give makes the slave cmd's terminal: its stdio that was the outer
// terminal, and its controlling terminal, with cmd in a process group of
// its own — in the foreground, unless on demand.
func (t *terminal) give(cmd *exec.Cmd) {
	cmd.Stdin = t.slave
	if sameFile(outer, 1) {
		cmd.Stdout = t.slave
	}
	if sameFile(outer, 2) {
		cmd.Stderr = t.slave
	}
	// Foreground's Ctty is a descriptor of this process, not the child's.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Foreground: !t.onDemand, Ctty: int(t.slave.Fd())}
}

// wants says whether a stop of the command, by sig, is its asking for
// the terminal it was started in the background of; if so, the command's
// group (pid) is given the terminal's foreground, once. The caller lets
// it go on and tells srt.
func (t *terminal) wants(pid int, sig syscall.Signal) bool {
	if !t.onDemand || t.given || (sig != syscall.SIGTTIN && sig != syscall.SIGTTOU) {
		return false
	}
	t.given = true
	// Through the master: this process's own copy of the slave is
	// closed once the command runs; the kernel takes the request for
	// the slave, this session's terminal.
	if rc, err := t.master.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.IoctlSetPointerInt(int(fd), unix.TIOCSPGRP, pid) })
	}
	return true
}

// started drops the init's copy of the slave: the command holds it.
func (t *terminal) started() { t.slave.Close() }

// resize copies the outer terminal's size to the sandbox's, which makes
// the kernel send SIGWINCH to the command's foreground group.
func (t *terminal) resize() {
	ws, err := unix.IoctlGetWinsize(outer, unix.TIOCGWINSZ)
	if err != nil {
		return
	}
	if rc, err := t.master.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws) })
	}
}

// raw makes the outer terminal raw again: a caller that stopped may have
// restored it.
func (t *terminal) raw() { term.MakeRaw(outer) }

// finish waits for the command's last output, once every process that
// held the slave is gone — but half a second at most: a slave the
// command left in flight in a Unix socket is freed only by the kernel's
// garbage collector, whenever it runs — and gives the outer terminal its
// modes back.
func (t *terminal) finish() {
	t.master.SetReadDeadline(time.Now().Add(500 * time.Millisecond))
	<-t.copied
	term.Restore(outer, t.saved)
}

func (t *terminal) close() {
	t.master.Close()
	if t.slave != nil {
		t.slave.Close()
	}
}

// sameFile says whether descriptors a and b are the same open terminal
// or file.
func sameFile(a, b int) bool {
	var sa, sb unix.Stat_t
	if unix.Fstat(a, &sa) != nil || unix.Fstat(b, &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino && sa.Rdev == sb.Rdev
}
