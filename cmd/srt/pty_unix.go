//go:build linux || darwin

package main

import (
	"io"
	"os"
	"os/signal"
	"sync"
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
	saved         *term.State // the caller's terminal modes
	mu            sync.Mutex
	raw           bool // srt holds the caller's terminal raw
	out           chan struct{}
	winch         chan os.Signal
}

// isTerminal reports whether fd is a terminal.
func isTerminal(fd int) bool { return term.IsTerminal(fd) }

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
	modes, err := unix.IoctlGetTermios(0, tcGet)
	if err != nil {
		return nil, err
	}
	// The command's terminal starts out as the caller's was.
	if err := unix.IoctlSetTermios(int(slave.Fd()), tcSet, modes); err != nil {
		return nil, err
	}
	p := &ptyRelay{master: master, slave: slave, out: make(chan struct{}), winch: make(chan os.Signal, 4)}
	if p.saved, err = term.GetState(0); err != nil {
		return nil, err
	}
	p.resize()
	// A read of the terminal from the background fails (EIO) rather than
	// stopping srt: relayInput then waits to be in the foreground again.
	signal.Ignore(syscall.SIGTTIN)
	p.take()
	signal.Notify(p.winch, syscall.SIGWINCH)
	go func() {
		for range p.winch {
			p.resize()
		}
	}()
	go p.relayInput()
	go func() {
		io.Copy(io.MultiWriter(os.Stdout, scan), master) // EIO once every holder of the slave is gone
		close(p.out)
	}()
	return p, nil
}

// foreground says whether srt's process group is the foreground job of
// its terminal (stdin): whether the shell gave srt the terminal. ok is
// false when stdin is no terminal of this session.
func foreground() (fg, ok bool) {
	pgrp, err := unix.IoctlGetInt(0, unix.TIOCGPGRP)
	if err != nil {
		return false, false
	}
	return pgrp == unix.Getpgrp(), true
}

// take makes the caller's terminal raw for the relay, at its size of now,
// when srt is in the foreground: a job in the background leaves it to the
// shell.
func (p *ptyRelay) take() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if fg, _ := foreground(); p.raw || !fg {
		return
	}
	if _, err := term.MakeRaw(0); err == nil {
		p.raw = true
	}
	p.resize()
}

// suspend gives the caller its terminal back as it was: srt stops, or
// ends.
func (p *ptyRelay) suspend() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.raw {
		term.Restore(0, p.saved)
		p.raw = false
	}
}

// relayInput copies what is typed to the command's terminal while srt is
// the terminal's foreground job. In the background, what is typed is the
// shell's: it waits, without reading, to be brought back (fg).
func (p *ptyRelay) relayInput() {
	buf := make([]byte, 4096)
	for {
		n, err := unix.Read(0, buf)
		if n > 0 {
			if _, err := p.master.Write(buf[:n]); err != nil {
				return
			}
			continue
		}
		switch {
		case err == unix.EINTR:
		case err == unix.EIO:
			fg, ok := foreground()
			for ok && !fg {
				time.Sleep(100 * time.Millisecond)
				fg, ok = foreground()
			}
			if !ok {
				return // the terminal is gone
			}
			p.take()
		default:
			return // the end of input
		}
	}
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
	p.suspend()
}
