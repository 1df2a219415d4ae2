package main

import (
	"os"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/nsexec"
)

// sandboxCommand prepares argv to run in the Linux namespace sandbox.
func sandboxCommand(c *cli, settings *config.Settings, argv []string) (*nsexec.Launch, error) {
	cwd, err := os.Getwd()
	if err != nil {
		return nil, err
	}
	home, _ := homeDir()
	l, err := nsexec.Prepare(settings, argv, os.Environ(), cwd, home, c.debug)
	if err != nil {
		return nil, err
	}
	c.debugf("Mount plan:\n%s", l.Plan)
	return l, nil
}

// explainStart says why the sandbox could not start, with the fix.
func explainStart(err error) error { return nsexec.Explain(err) }
