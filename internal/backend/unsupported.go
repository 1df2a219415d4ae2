package backend

import (
	"context"
	"errors"
	"os/exec"
	"runtime"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/netfilter"
)

// Unsupported is the backend of a system srt has no sandbox for: it
// refuses the session and every run with an *UnsupportedError naming the
// system, so that nothing runs unconfined. A backend still being written
// refuses so what it cannot do yet (Windows's).
func Unsupported() Backend { return unsupportedBackend{} }

// unsupportedBackend refuses every run, and the session itself.
type unsupportedBackend struct{}

// noBackend is why nothing runs here.
func noBackend() error {
	return &UnsupportedError{Missing: "a sandbox backend for " + runtime.GOOS,
		Err: errors.New("no sandbox backend for " + runtime.GOOS + " yet; refusing to run commands unconfined")}
}

func (unsupportedBackend) Supported() error                                   { return noBackend() }
func (unsupportedBackend) Start(*config.Settings) error                       { return noBackend() }
func (unsupportedBackend) SetNetwork(config.Network, *netfilter.Policy) error { return nil }
func (unsupportedBackend) Stop()                                              {}
func (unsupportedBackend) Enforcement(*config.Settings) Enforcement {
	return Enforcement{Level: None}
}
func (unsupportedBackend) HostWritable(string) bool { return false }
func (unsupportedBackend) Settle(string)            {}
func (unsupportedBackend) Command(context.Context, Run, []string) (*exec.Cmd, error) {
	return nil, noBackend()
}
func (unsupportedBackend) Wrap(Run, []string) ([]string, error) { return nil, noBackend() }
func (unsupportedBackend) StartCommand(cmd *exec.Cmd) error     { return cmd.Start() }
func (unsupportedBackend) ExplainStart(err error) error         { return err }
func (unsupportedBackend) LandlockABI() int                     { return 0 }
func (unsupportedBackend) Doctor() *Report {
	return &Report{Enforcement: Enforcement{Level: None}, Why: noBackend().Error()}
}
