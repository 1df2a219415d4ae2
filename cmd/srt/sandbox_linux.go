package main

import (
	"fmt"
	"os"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/nsexec"
)

// launch is a prepared run, with the pty relay when srt is on a terminal.
type launch struct {
	*nsexec.Launch
	pty *ptyRelay
}

// sandboxCommand prepares argv to run in the Linux namespace sandbox.
func sandboxCommand(c *cli, settings *config.Settings, argv []string) (*launch, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	home, _ := homeDir()
	pty, err := startPTY()
	if err != nil {
		return nil, fmt.Errorf("setting up the terminal: %w", err)
	}
	l, err := nsexec.Prepare(settings, nsexec.Options{Argv: argv, Env: os.Environ(), Cwd: cwd, Home: home, Debug: c.debug, Terminal: pty != nil})
	if err != nil {
		if pty != nil {
			pty.stop()
		}
		return nil, err
	}
	if pty != nil {
		l.Cmd.Stdin, l.Cmd.Stdout = pty.slave, pty.slave
		if isTerminal(2) {
			l.Cmd.Stderr = pty.slave
		}
	}
	c.debugf("Mount plan:\n%s", l.Plan)
	return &launch{Launch: l, pty: pty}, nil
}

// started runs once the sandbox holds its stdio.
func (l *launch) started() {
	if l.pty != nil {
		l.pty.started()
	}
}

// Close waits for the command's last output, restores the terminal and
// removes the run's host state.
func (l *launch) Close() error {
	if l.pty != nil {
		l.pty.stop()
	}
	return l.Launch.Close()
}

// explainStart says why the sandbox could not start, with the fix.
func explainStart(err error) error { return nsexec.Explain(err) }
