//go:build !linux

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

// errUnsupported: on this system the library cannot build a sandbox yet
// (macOS and Windows backends are not written), so it refuses.
var errUnsupported = errors.New("srt: no sandbox backend for " + runtime.GOOS + " yet; refusing to run commands unconfined")

type platform struct{}

type run struct{ key, text string }

func (r *run) stop() {}

type planInfo struct {
	text, cwd string
	rules     []fsRule
}

func supported() error                             { return errUnsupported }
func (s *Sandbox) start(*config.Settings) error    { return errUnsupported }
func (s *Sandbox) setPolicy(*netfilter.Policy)     {}
func (s *Sandbox) stopPlatform()                   {}
func (s *Sandbox) enforcement() nsexec.Enforcement { return nsexec.Enforcement{Level: "none"} }
func hostWritable(string) bool                     { return false }
func (s *Sandbox) command(context.Context, Run, []string) (*exec.Cmd, error) {
	return nil, errUnsupported
}

func (s *Sandbox) settle(string) {}

func (s *Sandbox) wrap(Run, []string) ([]string, error) { return nil, errUnsupported }
