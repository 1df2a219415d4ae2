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

// ptyRelay gives the sandbox a pseudo-terminal of its own when srt's
// stdin is a terminal. The command gets the pty's slave as its
// controlling terminal, so an interactive shell has job control, window
// size and Ctrl-C, while the caller's terminal is only ever written and
// read by srt: keystrokes the command injects (TIOCSTI) land in its own
// pty, and modes it sets are its pty's.
//
// srt reads the caller's terminal only while it holds it — raw, its
// modes saved — and it holds it only while the command has its own
// terminal's foreground (wanted) and srt is the foreground job of the
// caller's: never in the background (the kernel refuses that read too:
// SIGTTIN is ignored, so it fails with EIO), never while srt is stopped,
// never once the command has ended (ended). When it lets the terminal go
// (srt stops, or ends) the modes it saved are restored.
type ptyRelay struct {
	master, slave *os.File
	out           *os.File // where the command's terminal output goes
	mu            sync.Mutex
	// wanted: the command has its terminal's foreground — from the start,
	// or on demand since it asked (want).
	wanted bool
	// saved holds the caller's terminal's modes while srt holds it raw;
	// away: srt found itself in the background meanwhile (a read failed
	// with EIO) and waits to be in the foreground again.
	saved *term.State
	away  bool
	ended bool
	wake  [2]int // a pipe that wakes the input relay
	out1  chan struct{}
	winch chan os.Signal
}

// isTerminal reports whether fd is a terminal.
func isTerminal(fd int) bool { return term.IsTerminal(fd) }

// startPTY sets up the relay for a stdin that is a terminal; the
// command's terminal output goes to out, and scan. On demand, the
// command starts in the background of its terminal and srt leaves the
// caller's alone until want says the command asked for it; otherwise
// srt takes it at once (when in the foreground).
func startPTY(out *os.File, onDemand bool, scan io.Writer) (*ptyRelay, error) {
	master, slave, err := openPTY()
	if err != nil {
		return nil, err
	}
	p := &ptyRelay{master: master, slave: slave, out: out, wanted: !onDemand, out1: make(chan struct{}), winch: make(chan os.Signal, 4)}
	fail := func(err error) (*ptyRelay, error) {
		master.Close()
		slave.Close()
		return nil, err
	}
	modes, err := unix.IoctlGetTermios(0, tcGet)
	if err != nil {
		return fail(err)
	}
	// The command's terminal starts out as the caller's was.
	if err := unix.IoctlSetTermios(int(slave.Fd()), tcSet, modes); err != nil {
		return fail(err)
	}
	if err := unix.Pipe(p.wake[:]); err != nil {
		return fail(err)
	}
	for _, fd := range p.wake {
		unix.CloseOnExec(fd)
		unix.SetNonblock(fd, true)
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
		// EIO once every holder of the slave is gone. A caller's output
		// that fails (closed) does not stop the draining.
		io.Copy(io.MultiWriter(lenient{out}, scan), master)
		close(p.out1)
	}()
	return p, nil
}

// lenient is a writer whose failures are dropped: the pty must be
// drained whatever becomes of where its output goes.
type lenient struct{ w io.Writer }

func (l lenient) Write(b []byte) (int, error) {
	l.w.Write(b)
	return len(b), nil
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

// want is the command asking for its terminal, started on demand: srt
// takes the caller's for it, now or once in the foreground.
func (p *ptyRelay) want() {
	p.mu.Lock()
	p.wanted = true
	p.mu.Unlock()
	p.take()
}

// take makes the caller's terminal raw for the relay, at its size of now,
// when the command wants it and srt is in the foreground: a job in the
// background leaves it to the shell.
func (p *ptyRelay) take() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if fg, _ := foreground(); !p.wanted || p.ended || !fg {
		return
	}
	if p.saved == nil {
		saved, err := term.MakeRaw(0)
		if err != nil {
			return
		}
		p.saved = saved
	}
	p.away = false
	p.resize()
	p.wakeUp()
}

// suspend gives the caller its terminal back as it was: srt stops, or
// ends.
func (p *ptyRelay) suspend() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.saved != nil {
		term.Restore(0, p.saved)
		p.saved = nil
	}
	p.wakeUp()
}

// wakeUp makes relayInput look at the state again (mu held or not).
func (p *ptyRelay) wakeUp() { unix.Write(p.wake[1], []byte{0}) }

// relayInput copies what is typed to the command's terminal while srt
// holds the caller's. Otherwise it does not read: what is typed is the
// shell's, or another program's of srt's job (srt cmd | less).
func (p *ptyRelay) relayInput() {
	buf := make([]byte, 4096)
	for {
		p.mu.Lock()
		holding, waiting, ended := p.saved != nil && !p.away, p.wanted && (p.saved == nil || p.away), p.ended
		p.mu.Unlock()
		if ended {
			return
		}
		fds := []unix.PollFd{{Fd: int32(p.wake[0]), Events: unix.POLLIN}}
		if holding {
			fds = append(fds, unix.PollFd{Fd: 0, Events: unix.POLLIN})
		}
		timeout := -1
		if waiting {
			// The shell continues srt when it gives it the terminal (fg),
			// which takes it; this looks again now and then all the same.
			timeout = 100
		}
		n, err := unix.Poll(fds, timeout)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return
		}
		if fds[0].Revents != 0 {
			var b [64]byte
			unix.Read(p.wake[0], b[:])
			continue
		}
		if n == 0 {
			if waiting {
				p.take()
			}
			continue
		}
		if fds[1].Revents&unix.POLLIN == 0 {
			return // the terminal is gone
		}
		// Only what is there: another reader of the terminal (the shell
		// after srt, less beside it) may have taken it since.
		k, err := unix.IoctlGetInt(0, inQueue)
		if err != nil || k <= 0 {
			k = 1
		}
		n, err = unix.Read(0, buf[:min(k, len(buf))])
		if n > 0 {
			if _, err := p.master.Write(buf[:n]); err != nil {
				return
			}
			continue
		}
		switch err {
		case unix.EINTR, unix.EAGAIN:
		case unix.EIO:
			// In the background (or the terminal hung up): wait to be
			// given it again.
			p.mu.Lock()
			p.away = true
			p.mu.Unlock()
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

// stop, once the command has ended, reads no more of the caller's
// terminal, waits briefly for the command's last output, then gives the
// caller its terminal back as it was.
func (p *ptyRelay) stop() {
	p.mu.Lock()
	p.ended = true
	p.mu.Unlock()
	p.wakeUp()
	select {
	case <-p.out1:
	case <-time.After(time.Second):
	}
	signal.Stop(p.winch)
	close(p.winch)
	p.suspend()
}
