package main

import "os/exec"

// job is what supervise needs beyond the Cmd.
type job struct {
	start      func() error // starts the Cmd; nil: Cmd.Start
	afterStart func()       // if set, runs once the command has started
	// stopped tells that the command stopped (job control), and whether
	// for a SIGTSTP srt relayed (true): srt stops too — when Ctrl-Z on its
	// terminal or a SIGTSTP to srt was the cause — giving the terminal
	// back meanwhile (suspend), and takes it again when it goes on
	// (resume).
	stopped         <-chan bool
	suspend, resume func()
	// foreground says whether srt is its terminal's foreground job (nil:
	// it has no terminal): the shell that started it would continue it.
	foreground func() bool
}

// startCmd starts cmd, then runs afterStart.
func (j job) startCmd(cmd *exec.Cmd) error {
	start := j.start
	if start == nil {
		start = cmd.Start
	}
	if err := start(); err != nil {
		return &startError{err}
	}
	if j.afterStart != nil {
		j.afterStart()
	}
	return nil
}

// startError is a command that could not be started at all.
type startError struct{ err error }

func (e *startError) Error() string { return "cannot start the sandbox: " + e.err.Error() }
func (e *startError) Unwrap() error { return e.err }
