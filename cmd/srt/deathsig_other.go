//go:build !linux

package main

import "os/exec"

// dieWithSupervisor has no portable equivalent of Linux's parent-death
// signal; the macOS and Windows backends will tie the command to srt their
// own way (a kqueue watch, a job object).
func dieWithSupervisor(cmd *exec.Cmd) {}
