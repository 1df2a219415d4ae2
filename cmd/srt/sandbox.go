//go:build !linux

package main

import (
	"errors"
	"os/exec"

	"github.com/srt-go/srt/config"
)

// errNoBackend: on this platform no backend exists yet, and a command is
// never run without the isolation the settings ask for.
var errNoBackend = errors.New("no sandbox backend is available on this platform yet")

type launch struct{ Cmd *exec.Cmd }

func (*launch) Close() error { return nil }
func (*launch) started()     {}

func sandboxCommand(c *cli, settings *config.Settings, argv []string) (*launch, error) {
	return nil, errNoBackend
}

func explainStart(err error) error { return err }
