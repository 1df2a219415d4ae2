//go:build !linux && !darwin

package main

import (
	"context"
	"os/exec"

	"github.com/srt-go/srt"
)

type launch struct{ Cmd *exec.Cmd }

func (*launch) Close() error  { return nil }
func (*launch) started()      {}
func (*launch) terminal(*job) {}

// sandboxCommand: the library refuses on this platform (no backend yet),
// so New has already failed before this is reached.
func sandboxCommand(c *cli, sb *srt.Sandbox, r srt.Run, argv []string, scan func(string)) (*launch, error) {
	cmd := sb.CommandRun(context.Background(), r, argv[0], argv[1:]...)
	return nil, cmd.Err
}

func closeOnExec() {}
