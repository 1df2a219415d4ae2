package main

import "os/exec"

// startCmd starts cmd with start (nil: cmd.Start), then runs afterStart,
// if set.
func startCmd(cmd *exec.Cmd, start func() error, afterStart func()) error {
	if start == nil {
		start = cmd.Start
	}
	if err := start(); err != nil {
		return &startError{err}
	}
	if afterStart != nil {
		afterStart()
	}
	return nil
}

// startError is a command that could not be started at all.
type startError struct{ err error }

func (e *startError) Error() string { return "cannot start the sandbox: " + e.err.Error() }
func (e *startError) Unwrap() error { return e.err }
