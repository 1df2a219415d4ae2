// Package unsupported is the backend of every system srt has none for
// yet: it refuses to run anything, so that nothing runs unconfined.
package unsupported

import (
	"context"
	"errors"
	"os/exec"
	"runtime"

	"github.com/srt-go/srt/config"
	"github.com/srt-go/srt/internal/backend"
	"github.com/srt-go/srt/netfilter"
)

// New is the backend of a system without a sandbox backend.
func New() backend.Backend { return unsupportedBackend{} }

// unsupportedBackend refuses every run, and the session itself.
type unsupportedBackend struct{}

// noBackend is why nothing runs here.
func noBackend() error {
	return &backend.UnsupportedError{Missing: "a sandbox backend for " + runtime.GOOS,
		Err: errors.New("no sandbox backend for " + runtime.GOOS + " yet; refusing to run commands unconfined")}
}

func (unsupportedBackend) Supported() error                                   { return noBackend() }
func (unsupportedBackend) Start(*config.Settings) error                       { return noBackend() }
func (unsupportedBackend) SetNetwork(config.Network, *netfilter.Policy) error { return nil }
func (unsupportedBackend) Stop()                                              {}
func (unsupportedBackend) Enforcement(*config.Settings) backend.Enforcement {
	return backend.Enforcement{Level: backend.None}
}
func (unsupportedBackend) HostWritable(string) bool { return false }
func (unsupportedBackend) Settle(string)            {}
func (unsupportedBackend) Command(context.Context, backend.Run, []string) (*exec.Cmd, error) {
	return nil, noBackend()
}
func (unsupportedBackend) Wrap(backend.Run, []string) ([]string, error) { return nil, noBackend() }
func (unsupportedBackend) StartCommand(cmd *exec.Cmd) error             { return cmd.Start() }
func (unsupportedBackend) ExplainStart(err error) error                 { return err }
func (unsupportedBackend) LandlockABI() int                             { return 0 }
func (unsupportedBackend) Doctor() *backend.Report {
	return &backend.Report{Enforcement: backend.Enforcement{Level: backend.None}, Why: noBackend().Error()}
}
