package main

import (
	"io"
	"os"
	"os/signal"
	"syscall"
	"time"

	"golang.org/x/sys/unix"
	"golang.org/x/term"
)

// ptyRelay gives the sandbox a pseudo-terminal of its own when srt runs on
// one. The command gets the pty's slave as its controlling terminal, so an
// interactive shell has job control, window size and Ctrl-C, while the
// caller's terminal is only ever written and read by srt: keystrokes the
// command injects (TIOCSTI) land in its own pty.
type ptyRelay struct {
	master, slave *os.File
	saved         *term.State
	out           chan struct{}
	winch         chan os.Signal
}

// isTerminal reports whether fd is a terminal.
func isTerminal(fd int) bool { return term.IsTerminal(fd) }

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

// startPTY sets up the relay when stdin and stdout are terminals; it
// returns nil otherwise (the command then inherits srt's stdio).
func startPTY(scan io.Writer) (*ptyRelay, error) {
	if !isTerminal(0) || !isTerminal(1) {
		return nil, nil
	}
	master, slave, err := openPTY()
	if err != nil {
		return nil, err
	}
	saved, err := unix.IoctlGetTermios(0, unix.TCGETS)
	if err != nil {
		return nil, err
	}
	// The command's terminal starts out as the caller's was.
	if err := unix.IoctlSetTermios(int(slave.Fd()), unix.TCSETS, saved); err != nil {
		return nil, err
	}
	p := &ptyRelay{master: master, slave: slave, out: make(chan struct{}), winch: make(chan os.Signal, 4)}
	p.resize()
	if p.saved, err = term.MakeRaw(0); err != nil {
		return nil, err
	}
	signal.Notify(p.winch, syscall.SIGWINCH)
	go func() {
		for range p.winch {
			p.resize()
		}
	}()
	go io.Copy(master, os.Stdin) // ends with srt; stdin cannot be unblocked
	go func() {
		io.Copy(io.MultiWriter(os.Stdout, scan), master) // EIO once every holder of the slave is gone
		close(p.out)
	}()
	return p, nil
}

// resize copies the caller's window size to the command's terminal, which
// makes the kernel send SIGWINCH to the command's foreground job.
func (p *ptyRelay) resize() {
	ws, err := unix.IoctlGetWinsize(0, unix.TIOCGWINSZ)
	if err != nil {
		return
	}
	// Through the raw descriptor: File.Fd would take the master out of
	// the poller.
	if rc, err := p.master.SyscallConn(); err == nil {
		rc.Control(func(fd uintptr) { unix.IoctlSetWinsize(int(fd), unix.TIOCSWINSZ, ws) })
	}
}

// started drops srt's own copy of the slave once the sandbox holds it.
func (p *ptyRelay) started() { p.slave.Close() }

// stop waits briefly for the command's last output, then gives the caller
// its terminal back as it was.
func (p *ptyRelay) stop() {
	select {
	case <-p.out:
	case <-time.After(time.Second):
	}
	signal.Stop(p.winch)
	close(p.winch)
	term.Restore(0, p.saved)
}

// suspend gives the caller its terminal back while srt stops.
func (p *ptyRelay) suspend() { term.Restore(0, p.saved) }

// resume takes it again once srt goes on, at its size of now.
func (p *ptyRelay) resume() {
	term.MakeRaw(0)
	p.resize()
}
