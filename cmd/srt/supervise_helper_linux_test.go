//go:build linux

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"

	"golang.org/x/sys/unix"
)

// superviseHelper, under superviseEnv, turns the test binary into a stand-in for srt's supervisor:
// it runs its arguments through supervise, in a session of their own as the
// sandbox will, and exits with the status supervise returns.
func superviseHelper() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	// The sandbox tells srt when the command stops; here the stand-in
	// learns it from waitid.
	stopped := make(chan struct{}, 1)
	watch := func() {
		for {
			var info unix.Siginfo
			err := unix.Waitid(unix.P_PID, cmd.Process.Pid, &info, unix.WSTOPPED, nil)
			if err == unix.EINTR {
				continue
			}
			if err != nil {
				return
			}
			stopped <- struct{}{}
		}
	}
	status, err := supervise(cmd, job{stopped: stopped, afterStart: func() { go watch() }})
	if err != nil {
		fmt.Fprintln(os.Stderr, "supervise:", err)
		os.Exit(1)
	}
	os.Exit(status)
}
