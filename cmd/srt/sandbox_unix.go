//go:build linux || darwin

package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"

	"golang.org/x/sys/unix"

	"github.com/srt-go/srt"
)

// launch is a prepared run, with the pty relay when srt is on a terminal.
type launch struct {
	Cmd *exec.Cmd
	pty *ptyRelay
	// scanned is the pipe that carries the command's stderr (and its
	// stdout, when both went to the same place) through srt, which reads
	// denials out of it; nil when the output goes straight through.
	scanned *outputScan
}

// sandboxCommand prepares argv to run in the session's sandbox, on a pty
// of its own when srt runs on a terminal. scan receives the command's
// error output line by line, where srt can see it.
func sandboxCommand(c *cli, sb *srt.Sandbox, r srt.Run, argv []string, scan func(string)) (*launch, error) {
	pty, err := startPTY(lineWriter(scan))
	if err != nil {
		return nil, fmt.Errorf("setting up the terminal: %w", err)
	}
	r.Terminal = pty != nil
	cmd := sb.CommandRun(context.Background(), r, argv[0], argv[1:]...)
	if cmd.Err != nil {
		if pty != nil {
			pty.stop()
		}
		return nil, cmd.Err
	}
	l := &launch{Cmd: cmd, pty: pty}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	if pty != nil {
		cmd.Stdin, cmd.Stdout = pty.slave, pty.slave
		if isTerminal(2) {
			cmd.Stderr = pty.slave
			return l, nil
		}
	}
	if !isTerminal(2) {
		s, err := scanOutput(cmd, pty == nil, scan)
		if err != nil {
			return nil, err
		}
		l.scanned = s
	}
	return l, nil
}

// started runs once the sandbox holds its stdio.
func (l *launch) started() {
	if l.pty != nil {
		l.pty.started()
	}
	if l.scanned != nil {
		l.scanned.started()
	}
}

// terminal gives the job what it knows of the terminal: whether srt is
// its foreground job, and the pty relay's part in stops.
func (l *launch) terminal(j *job) {
	j.foreground = func() bool {
		fg, _ := foreground()
		return fg
	}
	if l.pty != nil {
		j.suspend, j.resume = l.pty.suspend, l.pty.take
	}
}

// Close waits for the command's last output and restores the terminal.
func (l *launch) Close() error {
	if l.pty != nil {
		l.pty.stop()
	}
	if l.scanned != nil {
		l.scanned.wait()
	}
	return nil
}

// outputScan copies the command's output from a pipe to where srt's went.
type outputScan struct {
	w    *os.File
	done chan struct{}
}

// scanOutput puts a pipe in place of cmd's stderr; when srt's stdout and
// stderr are the same file (2>&1) and sameToo, stdout goes into the same
// pipe, so the two keep their order.
func scanOutput(cmd *exec.Cmd, sameToo bool, scan func(string)) (*outputScan, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	dst := os.Stderr
	if sameToo && sameFile(1, 2) {
		cmd.Stdout, dst = w, os.Stdout
	}
	cmd.Stderr = w
	s := &outputScan{w: w, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer r.Close()
		io.Copy(io.MultiWriter(dst, lineWriter(scan)), r)
	}()
	return s, nil
}

func (s *outputScan) started() { s.w.Close() }

// wait waits for the last output: every writer is gone once the
// sandbox's init has exited.
func (s *outputScan) wait() {
	s.w.Close()
	<-s.done
}

func sameFile(a, b int) bool {
	var sa, sb unix.Stat_t
	if unix.Fstat(a, &sa) != nil || unix.Fstat(b, &sb) != nil {
		return false
	}
	return sa.Dev == sb.Dev && sa.Ino == sb.Ino
}
