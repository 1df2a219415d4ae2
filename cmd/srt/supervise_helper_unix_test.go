//go:build unix

package main

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
)

// superviseHelper, under superviseEnv, turns the test binary into a stand-in for srt's supervisor:
// it runs its arguments through supervise, in a session of their own as the
// sandbox will, and exits with the status supervise returns.
func superviseHelper() {
	cmd := exec.Command(os.Args[1], os.Args[2:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	status, err := supervise(cmd, nil, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "supervise:", err)
		os.Exit(1)
	}
	os.Exit(status)
}
