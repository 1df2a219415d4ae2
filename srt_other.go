//go:build !linux && !darwin

package srt

import (
	"context"
	"errors"
	"os/exec"
	"runtime"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/netfilter"
	"github.com/srt-go/srt/nsexec"
)

// unsupportedBackend is every system without a sandbox backend yet
// (Windows): it refuses to run anything, so nothing runs unconfined.
type unsupportedBackend struct{}

// MaybeRunInit runs the sandbox's init when this process was started as
// one, and never returns then; otherwise it returns at once.
func MaybeRunInit() { nsexec.MaybeRun() }

func newBackend(*Sandbox) backend { return unsupportedBackend{} }

// noBackend is why nothing runs here.
func noBackend() error {
	return &UnsupportedError{Missing: "a sandbox backend for " + runtime.GOOS,
		Err: errors.New("no sandbox backend for " + runtime.GOOS + " yet; refusing to run commands unconfined")}
}

func (unsupportedBackend) supported() error                                   { return noBackend() }
func (unsupportedBackend) start(*config.Settings) error                       { return noBackend() }
func (unsupportedBackend) setNetwork(config.Network, *netfilter.Policy) error { return nil }
func (unsupportedBackend) stop()                                              {}
func (unsupportedBackend) enforcement(*config.Settings) Enforcement           { return Enforcement{Level: None} }
func (unsupportedBackend) hostWritable(string) bool                           { return false }
func (unsupportedBackend) settle(string)                                      {}
func (unsupportedBackend) command(context.Context, Run, []string) (*exec.Cmd, error) {
	return nil, noBackend()
}
func (unsupportedBackend) wrap(Run, []string) ([]string, error) { return nil, noBackend() }
func (unsupportedBackend) startCommand(cmd *exec.Cmd) error     { return cmd.Start() }
func (unsupportedBackend) explainStart(err error) error         { return err }
func (unsupportedBackend) landlockABI() int                     { return 0 }
func (unsupportedBackend) doctor() *Report {
	return &Report{Enforcement: Enforcement{Level: None}, Why: noBackend().Error()}
}

// run is a command of the session; none is ever made here.
type run struct{ key, text string }

func (r *run) stop() {}
