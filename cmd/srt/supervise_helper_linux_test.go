//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// superviseHelper, under superviseEnv, turns the test binary into a
// stand-in for srt's supervisor: it runs its arguments through supervise,
// in a session of their own as the sandbox will, and exits with the
// status supervise returns. Under superviseLate, the stand-in is its
// terminal's foreground job, and the word of each stop comes late: once
// a SIGCONT has ended the stop, as the sandbox's answer to a SIGTSTP
// does when it reaches srt after srt passed a SIGCONT on.
func superviseHelper() {
	late := os.Getenv(superviseEnv) == superviseLate
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// The sandbox tells srt when the command stops; here the stand-in
	// learns it from waitid.
	stopped := make(chan bool, 1)
	wait := func(options int) error {
		for {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, options, nil)
			if err != unix.EINTR {
				return err
			}
		}
	}
	watch := func() {
		for wait(unix.WSTOPPED) == nil {
			if late && wait(unix.WCONTINUED) != nil {
				return
			}
			stopped <- late // late: the answer to the SIGTSTP
		}
	}
	j := job{stopped: stopped, afterStart: func() { go watch() }}
	if late {
		j.foreground = func() bool { return true }
	}
	status, err := supervise(cmd, j)
	if err != nil {
		fmt.Fprintln(os.Stderr, "supervise:", err)
		os.Exit(1)
	}
	os.Exit(status)
}
