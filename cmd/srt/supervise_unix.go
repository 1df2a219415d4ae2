//go:build unix

package main

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"syscall"
)

// forwarded are the signals srt passes on to the command. The command runs
// in a session of its own (no controlling terminal it could inject
// keystrokes into), so the terminal's signals reach only srt, and srt is
// the one that must deliver them.
var forwarded = []os.Signal{
	syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT,
	syscall.SIGWINCH, syscall.SIGTSTP, syscall.SIGCONT,
}

// supervise starts cmd, forwards signals to it until it exits, and returns
// its exit status: its own code, or 128+N when signal N killed it. When the
// command stops, srt stops too, so the shell that started srt sees the job
// stop; its SIGCONT on "fg" comes here and is forwarded in turn.
//
// SIGINT and SIGTERM are forwarded like the rest, and srt then exits with
// the command's status (143 for a SIGTERM'd command): a killed job must not
// look successful, unlike the reference, which exits 0.
func supervise(cmd *exec.Cmd, j job) (int, error) {
	sigs := make(chan os.Signal, 16)
	// Listening starts before the child exists, so that a signal arriving
	// while it starts is queued and delivered, not lost or fatal to srt
	// alone (which would orphan the command).
	signal.Notify(sigs, forwarded...)
	defer signal.Stop(sigs)
	dieWithSupervisor(cmd)
	// Start and Wait run on this goroutine's thread lock: the parent-death
	// signal fires when the thread that forked exits, and a locked thread
	// is not retired by the runtime while the command runs.
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := j.startCmd(cmd); err != nil {
		return 0, err
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	tstp := false // a SIGTSTP was forwarded since srt last went on
	// pass forwards sig, and says whether it lets the job go on.
	pass := func(sig os.Signal) (goesOn bool) {
		switch sig {
		case syscall.SIGTSTP:
			tstp = true
		case syscall.SIGCONT:
			tstp = false
			if j.resume != nil {
				j.resume()
			}
		}
		// An error means the command has just exited; Wait reports
		// that.
		_ = cmd.Process.Signal(sig)
		return sig == syscall.SIGCONT
	}
	for {
		select {
		case sig := <-sigs:
			pass(sig)
		case asked := <-j.stopped:
			// A SIGCONT already here (select took the stop first) has
			// overtaken the stop: it goes on to the job, which goes on.
			if overtaken(sigs, pass) {
				continue
			}
			if !tstp && (asked || j.foreground == nil || !j.foreground()) {
				// The command stopped itself, or was stopped from
				// inside, with no shell to continue srt: a stopped srt
				// would serve nothing and never end. Or the stop
				// answers a SIGTSTP that a SIGCONT srt forwarded since
				// has overtaken (the answer can come after it). The
				// sandbox goes on.
				_ = cmd.Process.Signal(syscall.SIGCONT)
				continue
			}
			tstp = false
			if j.suspend != nil {
				j.suspend()
			}
			// SIGSTOP: srt's SIGTSTP is caught, to be forwarded.
			_ = syscall.Kill(os.Getpid(), syscall.SIGSTOP)
		case err := <-done:
			return exitStatus(cmd, err)
		}
	}
}

// overtaken passes on the signals already waiting in sigs, in order, and
// says whether one of them let the job go on.
func overtaken(sigs <-chan os.Signal, pass func(os.Signal) bool) bool {
	goesOn := false
	for {
		select {
		case sig := <-sigs:
			goesOn = pass(sig) || goesOn
		default:
			return goesOn
		}
	}
}

func exitStatus(cmd *exec.Cmd, err error) (int, error) {
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return 0, fmt.Errorf("waiting for the command: %w", err)
	}
	ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !ok {
		return cmd.ProcessState.ExitCode(), nil
	}
	if ws.Signaled() {
		return 128 + int(ws.Signal()), nil
	}
	return ws.ExitStatus(), nil
}
