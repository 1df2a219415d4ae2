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

// launch is a prepared run, with the pty relay when srt's stdin is a
// terminal.
type launch struct {
	Cmd *exec.Cmd
	pty *ptyRelay
	// scanned are the pipes that carry the command's stderr (which srt
	// reads denials out of), and its stdout where that is a terminal,
	// through srt; none when the output goes straight through.
	scanned []*outputScan
}

// The caller's terminal never enters the sandbox: no descriptor of it
// reaches the command, so the command can neither read what is typed
// there, nor inject keystrokes, nor change its modes, nor keep it past
// the run. Of srt's stdin, stdout and stderr (its other descriptors are
// all close-on-exec: closeOnExec):
//
//   - stdin a terminal: the command gets a pty of srt's making in its
//     place (ptyRelay), and as its stdout and stderr where those are the
//     same terminal. With stdout that terminal, the command has the pty's
//     foreground from the start, as a shell's job would; otherwise (srt
//     cmd | less, srt cmd > log) it starts in the background of the pty
//     and is given the foreground, and srt reads what is typed for it,
//     only once it reads its terminal or sets its modes (Run.OnTerminal).
//   - stdout or stderr a terminal the pty does not stand for: a pipe, which
//     srt copies there. So is stderr always (srt reads denials out of it).
//   - a character device held by path only (O_PATH), which the command
//     could open through /proc/self/fd: /dev/null.
//   - anything else (a file, a pipe, /dev/null) goes through as it is.

// sandboxCommand prepares argv to run in the session's sandbox, with
// stdio as above. scan receives the command's error output line by line,
// where srt can see it.
func sandboxCommand(c *cli, sb *srt.Sandbox, r srt.Run, argv []string, scan func(string)) (*launch, error) {
	var pty *ptyRelay
	if isTerminal(0) {
		// The command's terminal output goes to the caller's terminal:
		// stdout, stderr, or else stdin itself (srt cmd >out 2>err).
		out, ttyOut := os.Stdin, false
		if isTerminal(1) && sameFile(0, 1) {
			out, ttyOut = os.Stdout, true
		} else if isTerminal(2) && sameFile(0, 2) {
			out = os.Stderr
		}
		var err error
		if pty, err = startPTY(out, !ttyOut, lineWriter(scan)); err != nil {
			return nil, fmt.Errorf("setting up the terminal: %w", err)
		}
		r.Terminal = true
		if !ttyOut {
			r.OnTerminal = pty.want
		}
	}
	fail := func(err error) (*launch, error) {
		if pty != nil {
			pty.started() // no command holds the slave: the relay ends at once
			pty.stop()
		}
		return nil, err
	}
	cmd := sb.CommandRun(context.Background(), r, argv[0], argv[1:]...)
	if cmd.Err != nil {
		return fail(cmd.Err)
	}
	l := &launch{Cmd: cmd, pty: pty}
	std := []*os.File{os.Stdin, os.Stdout, os.Stderr}
	for fd := range std {
		if heldByPath(fd) {
			null, err := os.OpenFile(os.DevNull, os.O_RDWR, 0)
			if err != nil {
				return fail(err)
			}
			std[fd] = null
		}
	}
	if pty != nil {
		std[0] = pty.slave
		for fd := 1; fd <= 2; fd++ {
			if isTerminal(fd) && sameFile(0, fd) {
				std[fd] = pty.slave
			}
		}
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = std[0], std[1], std[2]
	var err error
	if l.scanned, err = relayOutput(cmd, scan); err != nil {
		return fail(err)
	}
	return l, nil
}

// started runs once the sandbox holds its stdio.
func (l *launch) started() {
	if l.pty != nil {
		l.pty.started()
	}
	for _, s := range l.scanned {
		s.started()
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

// Close reads no more of the caller's terminal, waits for the command's
// last output and restores the terminal.
func (l *launch) Close() error {
	if l.pty != nil {
		l.pty.stop()
	}
	for _, s := range l.scanned {
		s.wait()
	}
	return nil
}

// outputScan copies the command's output from a pipe to where srt's went.
type outputScan struct {
	w    *os.File
	done chan struct{}
}

// relayOutput puts pipes that srt copies in place of cmd's stderr, where
// it is srt's own (not the pty, not /dev/null), and of its stdout where
// that is srt's own and a terminal; when srt's stdout and stderr are the
// same file (2>&1), stdout goes into stderr's pipe, so the two keep their
// order. What comes through stderr's pipe is scanned.
func relayOutput(cmd *exec.Cmd, scan func(string)) ([]*outputScan, error) {
	var out []*outputScan
	if cmd.Stderr == os.Stderr {
		w, s, err := copyPipe(os.Stderr, lineWriter(scan))
		if err != nil {
			return nil, err
		}
		cmd.Stderr = w
		if cmd.Stdout == os.Stdout && sameFile(1, 2) {
			cmd.Stdout = w
		}
		out = append(out, s)
	}
	if cmd.Stdout == os.Stdout && isTerminal(1) {
		w, s, err := copyPipe(os.Stdout, io.Discard)
		if err != nil {
			return nil, err
		}
		cmd.Stdout = w
		out = append(out, s)
	}
	return out, nil
}

// copyPipe makes a pipe whose bytes go to dst and to scan; w is its
// write end, for the command.
func copyPipe(dst *os.File, scan io.Writer) (*os.File, *outputScan, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, nil, err
	}
	s := &outputScan{w: w, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		defer r.Close()
		io.Copy(io.MultiWriter(lenient{dst}, scan), r)
	}()
	return w, s, nil
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
