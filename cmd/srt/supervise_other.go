//go:build !unix

package main

import "os/exec"

// supervise starts cmd and returns its exit code. Platforms without POSIX
// signals have nothing to forward, and no job control.
func supervise(cmd *exec.Cmd, j job) (int, error) {
	if err := j.startCmd(cmd); err != nil {
		return 0, err
	}
	if err := cmd.Wait(); err != nil && cmd.ProcessState == nil {
		return 0, err
	}
	return cmd.ProcessState.ExitCode(), nil
}
