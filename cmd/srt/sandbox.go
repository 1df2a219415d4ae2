package main

import (
	"errors"
	"os/exec"

	"github.com/srt-go/srt/config"
)

// errNoBackend is returned until a platform backend exists: a command is
// never run without the isolation the settings ask for.
var errNoBackend = errors.New("no sandbox backend is available on this platform yet")

// sandboxCommand prepares argv to run under settings. The process it
// returns is started and waited for by supervise.
func sandboxCommand(settings *config.Settings, argv []string) (*exec.Cmd, error) {
	_, _ = settings, argv
	return nil, errNoBackend
}
