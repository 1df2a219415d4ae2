package main

import (
	"os/exec"
	"syscall"
)

// dieWithSupervisor makes the kernel SIGKILL the command when srt dies,
// even by SIGKILL, so nothing the sandbox started outlives it.
func dieWithSupervisor(cmd *exec.Cmd) {
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	if cmd.SysProcAttr.Pdeathsig == 0 {
		cmd.SysProcAttr.Pdeathsig = syscall.SIGKILL
	}
}
