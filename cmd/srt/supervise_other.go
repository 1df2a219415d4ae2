//go:build !unix

package main

import "os/exec"

// supervise starts cmd (with start; nil: cmd.Start) and returns its exit
// code. Platforms without POSIX signals have nothing to forward.
func supervise(cmd *exec.Cmd, start func() error, afterStart func()) (int, error) {
	if err := startCmd(cmd, start, afterStart); err != nil {
		return 0, err
	}
	if err := cmd.Wait(); err != nil && cmd.ProcessState == nil {
		return 0, err
	}
	return cmd.ProcessState.ExitCode(), nil
}
