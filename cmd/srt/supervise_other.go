//go:build !unix

package main

import "os/exec"

// supervise starts cmd and returns its exit code. Platforms without POSIX
// signals have nothing to forward.
func supervise(cmd *exec.Cmd, afterStart func()) (int, error) {
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		return 0, err
	}
	return cmd.ProcessState.ExitCode(), nil
}
