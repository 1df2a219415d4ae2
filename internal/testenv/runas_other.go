//go:build !unix

package testenv

import "os/exec"

// runAs is never reached off Unix: runAsUnprivileged skips first.
func runAs(cmd *exec.Cmd, uid, gid uint32) {}
