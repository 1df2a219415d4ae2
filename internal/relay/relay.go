//go:build unix

// Package relay is what every process standing between srt and a command
// does alike, on Linux and on macOS: which signals it passes on and how,
// and how a command's end becomes the status a shell would tell.
package relay

import (
	"errors"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
)

// Notify asks for the signals a sandbox process passes on, on a goroutine
// of its own, and returns the wait for it: the runtime enables signals one
// at a time, each a handoff to its signal thread (2.5 ms for all of them on
// a 2-core VM), so the caller does its own setup meanwhile. A signal that
// arrives before the wait is over gets the runtime's default action.
//
// SIGURG (the runtime preempts goroutines with it, often while a process
// sets up) and SIGCHLD are left out: queued unread, they would fill the
// channel, and a signal arriving at a full channel is dropped. Children
// are reaped by waiting, never on a signal.
func Notify() func() <-chan os.Signal {
	sigs := make(chan os.Signal, 16)
	done := make(chan struct{})
	go func() {
		signal.Notify(sigs, Signals()...)
		close(done)
	}()
	return func() <-chan os.Signal {
		<-done
		return sigs
	}
}

// Signals is every catchable signal but SIGURG and SIGCHLD, and on Linux
// the two the threading library reserves (32 and 33); Linux's realtime
// signals up to 64 included.
func Signals() []os.Signal {
	last := syscall.Signal(31)
	if runtime.GOOS == "linux" {
		last = 64
	}
	var out []os.Signal
	for s := syscall.Signal(1); s <= last; s++ {
		switch s {
		case syscall.SIGKILL, syscall.SIGSTOP, syscall.SIGURG, syscall.SIGCHLD, 32, 33:
			continue
		}
		out = append(out, s)
	}
	return out
}

// Pass passes a relayed signal on to the command pid: a stop (stop) or a
// continue (cont, then SIGCONT to its whole group) to the job, SIGPIPE to
// no one (srt's own), the rest to the command.
func Pass(s syscall.Signal, pid int, stop, cont func()) {
	switch s {
	case syscall.SIGPIPE:
	case syscall.SIGTSTP:
		stop()
	case syscall.SIGCONT:
		cont()
		syscall.Kill(-pid, syscall.SIGCONT)
	default:
		syscall.Kill(pid, s)
	}
}

// Run passes the signals of sigs on to the started cmd until it exits, and
// returns its status.
func Run(cmd *exec.Cmd, sigs <-chan os.Signal) int {
	done := make(chan struct{})
	go func() {
		cmd.Wait()
		close(done)
	}()
	for {
		select {
		case sig := <-sigs:
			if s := sig.(syscall.Signal); s != syscall.SIGPIPE {
				cmd.Process.Signal(s)
			}
		case <-done:
			return ExitCode(cmd.ProcessState)
		}
	}
}

// ExitCode maps a child's end to a shell-style status.
func ExitCode(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok {
		return StatusCode(ws)
	}
	return ps.ExitCode()
}

// StatusCode is the shell's status for a wait status: the exit code, or
// 128+N for a death by signal N.
func StatusCode(ws syscall.WaitStatus) int {
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}

// Unwrap is the system's error in a failure to start a command, as a
// shell says it ("no such file or directory").
func Unwrap(err error) error {
	var ee *exec.Error
	if errors.As(err, &ee) {
		return ee.Err
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
