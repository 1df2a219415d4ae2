//go:build !linux && !darwin

package main

import (
	"context"
	"os"
	"os/exec"

	"github.com/srt-go/srt"
)

type launch struct{ Cmd *exec.Cmd }

func (*launch) Close() error  { return nil }
func (*launch) started()      {}
func (*launch) terminal(*job) {}

// sandboxCommand prepares the command with srt's own stdin, stdout and
// stderr (Windows: the backend's keeper hands exactly those three to the
// command). Where the library refuses (no backend, or Windows outside
// its test mode) New has already failed, or the Cmd says why.
func sandboxCommand(c *cli, sb *srt.Sandbox, r srt.Run, argv []string, scan func(string)) (*launch, error) {
	cmd := sb.CommandRun(context.Background(), r, argv[0], argv[1:]...)
	if cmd.Err != nil {
		return nil, cmd.Err
	}
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	return &launch{Cmd: cmd}, nil
}

func closeOnExec() {}
